#include "roles/local/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace edl::roles {
namespace {
namespace fs = std::filesystem;
using tensor::Tensor;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("edl_ckpt_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  Checkpoint Make(int64_t version) {
    Checkpoint c;
    c.version = version;
    c.epoch = 2;
    c.model_spec_json = R"({"model": {"class_name": "Sequential"}})";
    c.optimizer_json = R"({"class_name": "Adam"})";
    c.model.push_back({"dense/kernel", Tensor::FromVector({2, 3}, {1, 2, 3, 4, 5, 6})});
    c.model.push_back({"dense/bias", Tensor::FromVector({3}, {0.5f, -1, 7})});
    c.optimizer.push_back({"dense/kernel/m", Tensor::Full({2, 3}, 0.25f)});
    return c;
  }

  fs::path root_;
};

TEST_F(CheckpointTest, RoundTripsTensorsSpecAndOptimizerState) {
  ASSERT_TRUE(WriteCheckpoint(root_, Make(7), 0).ok());
  auto c = ReadCheckpoint(root_);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->version, 7);
  EXPECT_EQ(c->epoch, 2);
  ASSERT_EQ(c->model.size(), 2u);
  EXPECT_EQ(c->model[0].name, "dense/kernel");
  EXPECT_EQ(c->model[0].value.shape(), (tensor::Shape{2, 3}));
  EXPECT_EQ(c->model[1].value.ToVector(), (std::vector<float>{0.5f, -1, 7}));
  ASSERT_EQ(c->optimizer.size(), 1u);
  EXPECT_EQ(c->optimizer[0].value.ToVector()[5], 0.25f);
  EXPECT_NE(c->model_spec_json.find("Sequential"), std::string::npos);
}

TEST_F(CheckpointTest, ReadsTheNewestVersionFromARootAndPrunesOldOnes) {
  for (int v : {10, 20, 30, 40}) ASSERT_TRUE(WriteCheckpoint(root_, Make(v), 2).ok());
  EXPECT_EQ(ListCheckpointVersions(root_), (std::vector<int64_t>{30, 40}));
  EXPECT_EQ(ReadCheckpoint(root_)->version, 40);
  EXPECT_EQ(ReadCheckpoint((root_ / "version-30").string())->version, 30);
}

TEST_F(CheckpointTest, KeepMaxZeroKeepsEveryVersion) {
  for (int v : {1, 2, 3}) ASSERT_TRUE(WriteCheckpoint(root_, Make(v), 0).ok());
  EXPECT_EQ(ListCheckpointVersions(root_).size(), 3u);
}

TEST_F(CheckpointTest, LeavesNoTemporaryDirectoriesBehind) {
  ASSERT_TRUE(WriteCheckpoint(root_, Make(5), 0).ok());
  ASSERT_TRUE(WriteCheckpoint(root_, Make(5), 0).ok());  // overwrite same version
  int entries = 0;
  for (const auto& e : fs::directory_iterator(root_)) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "version-5");
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(CheckpointTest, DetectsCorruptAndTruncatedData) {
  ASSERT_TRUE(WriteCheckpoint(root_, Make(3), 0).ok());
  fs::path data = root_ / "version-3" / "tensors.bin";
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.put('\x7f');
  }
  auto corrupt = ReadCheckpoint(root_);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find("checksum mismatch in tensor \"dense/kernel\""),
            std::string::npos)
      << corrupt.status().message();

  fs::resize_file(data, 10);
  auto truncated = ReadCheckpoint(root_);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos)
      << truncated.status().message();
}

TEST_F(CheckpointTest, RejectsMalformedManifestsWithThePathNamed) {
  ASSERT_TRUE(WriteCheckpoint(root_, Make(3), 0).ok());
  fs::path manifest = root_ / "version-3" / "manifest.json";
  for (const char* bad :
       {"{not json", R"({"format": "other"})", R"({"format": "edl-checkpoint-1", "version": 3})"}) {
    std::ofstream(manifest) << bad;
    auto c = ReadCheckpoint((root_ / "version-3").string());
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find("manifest.json"), std::string::npos)
        << c.status().message();
  }
}

TEST_F(CheckpointTest, MissingCheckpointIsNotFound) {
  auto c = ReadCheckpoint((root_ / "nothing").string());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace edl::roles
