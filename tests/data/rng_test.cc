#include "data/rng.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gtest/gtest.h"

namespace edl::data {
namespace {

TEST(Rng, MatchesTheSplitMix64ReferenceSequence) {
  // Vigna's splitmix64.c seeded with 1234567.
  Rng rng(1234567);
  EXPECT_EQ(rng.NextU64(), 6457827717110365317ull);
  EXPECT_EQ(rng.NextU64(), 3203168211198807973ull);
  EXPECT_EQ(rng.NextU64(), 9817491932198370423ull);
  EXPECT_EQ(rng.NextU64(), 4593380528125082431ull);
  EXPECT_EQ(rng.NextU64(), 16408922859458223821ull);
}

TEST(Rng, ShufflesTheSameWayEverywhere) {
  std::vector<int64_t> v(10);
  std::iota(v.begin(), v.end(), 0);
  Rng rng(MixSeed(7, 0));
  rng.Shuffle(v);
  EXPECT_EQ(v, (std::vector<int64_t>{8, 5, 2, 0, 1, 3, 6, 7, 4, 9}));
}

TEST(Rng, DrawsUniformIntsAndNormalsWithTheRightMoments) {
  Rng rng(3);
  std::vector<int> counts(7);
  double sum = 0, sq = 0;
  const int n = 70000;
  for (int i = 0; i < n; ++i) {
    counts[rng.UniformInt(7)]++;
    double z = rng.Normal();
    sum += z;
    sq += z * z;
  }
  for (int c : counts) EXPECT_NEAR(c, n / 7, 400);
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sq / n, 1.0, 0.03);
  for (int i = 0; i < 1000; ++i) {
    double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Rng, MixSeedSeparatesNearbySeedsAndEpochs) {
  EXPECT_NE(MixSeed(1, 0), MixSeed(1, 1));
  EXPECT_NE(MixSeed(1, 0), MixSeed(2, 0));
  EXPECT_EQ(MixSeed(5, 9), MixSeed(5, 9));
}

}  // namespace
}  // namespace edl::data
