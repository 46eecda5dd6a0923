#include "roles/ps/partition.h"

#include <gtest/gtest.h>

namespace edl::roles::ps {
namespace {

// These values fix the partitioning (and the checkpoint layout): changing
// them breaks every existing PS checkpoint.
TEST(Partition, HashesNamesWithFnv1aAsDocumented) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("dense/kernel"), 0x00e866201259ba30ull);
  EXPECT_EQ(Fnv1a64("hidden/bias"), 0x577ada9719c34017ull);
}

TEST(Partition, PlacesDenseParametersStablyForAnyPsCount) {
  EXPECT_EQ(PsOfParameter("dense/kernel", 1), 0);
  EXPECT_EQ(PsOfParameter("dense/kernel", 2), 0);
  EXPECT_EQ(PsOfParameter("dense/kernel", 3), 2);
  EXPECT_EQ(PsOfParameter("dense/kernel", 7), 5);
  EXPECT_EQ(PsOfParameter("hidden/kernel", 2), 1);
  EXPECT_EQ(PsOfParameter("hidden/kernel", 4), 3);
  EXPECT_EQ(PsOfParameter("out/bias", 3), 1);
  EXPECT_EQ(PsOfParameter("dense/bias", 7), 2);
}

TEST(Partition, PlacesEmbeddingRowsByIdModuloPsCount) {
  EXPECT_EQ(PsOfId(0, 3), 0);
  EXPECT_EQ(PsOfId(7, 3), 1);
  EXPECT_EQ(PsOfId(1000000007, 2), 1);
  EXPECT_EQ(PsOfId(5, 1), 0);
}

TEST(Partition, RecognizesEmbeddingTablesByTheirWeightName) {
  EXPECT_TRUE(IsEmbeddingTable("emb/embeddings"));
  EXPECT_FALSE(IsEmbeddingTable("embeddings"));
  EXPECT_FALSE(IsEmbeddingTable("dense/kernel"));
  EXPECT_FALSE(IsEmbeddingTable("emb/embeddings/m"));
}

}  // namespace
}  // namespace edl::roles::ps
