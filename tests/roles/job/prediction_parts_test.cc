#include "roles/job/prediction_parts.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/file.h"
#include "tests/testing/run_edl.h"

namespace edl::roles::job {
namespace {

namespace fs = std::filesystem;
using tensor::Tensor;

// "y\n" then one line per row: its first column.
std::string Csv(const Tensor& rows) {
  std::string csv = "y\n";
  const std::vector<float> v = rows.ToVector();
  const int64_t cols = rows.dim(0) ? rows.numel() / rows.dim(0) : 0;
  for (int64_t i = 0; i < rows.dim(0); ++i) csv += std::to_string(int(v[i * cols])) + "\n";
  return csv;
}

Tensor Rows(int first, int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(float(first + i));
  return Tensor::FromVector({n, 1}, v);
}

TEST(PredictionParts, JoinsThePartsInRecordOrderIntoTheFileAndRemovesThem) {
  testing::TempDir dir;
  const std::string out = dir.File("out.csv");
  auto parts = PredictionParts::Open(out, Csv);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  EXPECT_EQ((*parts)->parts_dir(), out + ".parts");
  ASSERT_TRUE((*parts)->Put(3, 5, Rows(3, 2)).ok());
  ASSERT_TRUE((*parts)->Put(0, 3, Rows(0, 3)).ok());
  EXPECT_FALSE(fs::exists(out));  // nothing until Finish
  ASSERT_TRUE((*parts)->Finish(5).ok());
  EXPECT_EQ(*ReadFile(out), "y\n0\n1\n2\n3\n4\n");
  EXPECT_FALSE(fs::exists(out + ".parts"));
}

TEST(PredictionParts, KeepsThePartsAsTheOutputOfADirectory) {
  testing::TempDir dir;
  const std::string out = dir.File("predictions") + "/";
  auto parts = PredictionParts::Open(out, Csv);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_TRUE((*parts)->Put(0, 2, Rows(0, 2)).ok());
  EXPECT_FALSE(fs::exists(out + "_SUCCESS"));
  ASSERT_TRUE((*parts)->Put(2, 3, Rows(2, 1)).ok());
  ASSERT_TRUE((*parts)->Finish(3).ok());
  EXPECT_EQ(*ReadFile(out + "part-000000000000-000000000002.csv"), "y\n0\n1\n");
  EXPECT_EQ(*ReadFile(out + "part-000000000002-000000000003.csv"), "y\n2\n");
  EXPECT_TRUE(fs::exists(out + "_SUCCESS"));
}

TEST(PredictionParts, RefusesToFinishWithRecordsMissingAndWritesNoOutput) {
  testing::TempDir dir;
  const std::string out = dir.File("out.csv");
  auto parts = PredictionParts::Open(out, Csv);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE((*parts)->Put(0, 2, Rows(0, 2)).ok());
  ASSERT_TRUE((*parts)->Put(4, 6, Rows(4, 2)).ok());
  Status s = (*parts)->Finish(6);
  EXPECT_EQ(s.message(), out + ".parts: no predictions for records [2, 4) of 6");
  s = (*parts)->Finish(8);
  EXPECT_EQ(s.message(), out + ".parts: no predictions for records [2, 4) of 8");
  EXPECT_FALSE(fs::exists(out));
}

TEST(PredictionParts, RemovesStalePartsOfAnEarlierRunButNothingElse) {
  testing::TempDir dir;
  const std::string out = dir.File("predictions");
  fs::create_directories(out);
  ASSERT_TRUE(WriteFileAtomically(out + "/part-000000000000-000000000009.csv", "y\n").ok());
  ASSERT_TRUE(WriteFileAtomically(out + "/_SUCCESS", "").ok());
  ASSERT_TRUE(WriteFileAtomically(out + "/notes.txt", "mine").ok());
  auto parts = PredictionParts::Open(out, Csv);  // an existing directory
  ASSERT_TRUE(parts.ok());
  EXPECT_FALSE(fs::exists(out + "/part-000000000000-000000000009.csv"));
  EXPECT_FALSE(fs::exists(out + "/_SUCCESS"));
  EXPECT_EQ(*ReadFile(out + "/notes.txt"), "mine");
  ASSERT_TRUE((*parts)->Put(0, 1, Rows(0, 1)).ok());
  EXPECT_TRUE((*parts)->Finish(1).ok());
}

TEST(PredictionParts, AMasterContinuingTheJobKeepsTheOldMastersParts) {
  testing::TempDir dir;
  const std::string out = dir.File("predictions.csv");
  {
    auto first = PredictionParts::Open(out, Csv);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE((*first)->Put(0, 2, Rows(0, 2)).ok());
  }  // the master dies
  auto parts = PredictionParts::Open(out, Csv, /*resume=*/true);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE((*parts)->Put(2, 3, Rows(2, 1)).ok());
  ASSERT_TRUE((*parts)->Finish(3).ok());
  EXPECT_EQ(*ReadFile(out), "y\n0\n1\n2\n");
}

TEST(PredictionParts, NamesTheDirectoryItCannotCreate) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.File("file"), "x").ok());
  auto parts = PredictionParts::Open(dir.File("file") + "/sub/out.csv", Csv);
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.status().message().rfind(dir.File("file") + "/sub/out.csv.parts: cannot create "
                                                              "the directory: ",
                                           0),
            0u)
      << parts.status().message();
}

}  // namespace
}  // namespace edl::roles::job
