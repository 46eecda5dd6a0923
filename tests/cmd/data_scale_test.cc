// Data at scale: a distributed job over a data set several times larger
// than the memory any of its processes is allowed, in gzip TFRecord shards
// of tf.train.Examples whose decoded values weigh as much as the files. Every process streams; each
// logs its peak RSS (VmHWM) when it ends, and the test holds every one to a bound that the data set
// exceeds eightfold. Every record is trained exactly once and the model learns the planted rule.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <map>
#include <random>
#include <regex>
#include <string>

#include "data/tf_example.h"
#include "data/tfrecord.h"
#include "tests/testing/paths.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

constexpr int64_t kBoundMiB = 128;
constexpr int kWidth = 1024;  // values per record: 4 KiB decoded, as a small image

// Records [first, first + n): "x" of kWidth floats (two normal, the rest
// faint levels), "label" = x0 + x1 > 0. Returns the uncompressed bytes
// written. Decoded, the records weigh as much as the file: a process that
// held them would exceed the bound.
int64_t WriteShard(const std::string& path, int64_t first, int64_t n) {
  gzFile f = gzopen(path.c_str(), "wb1");
  EDL_CHECK(f != nullptr);
  std::mt19937 rng(static_cast<uint32_t>(first));
  std::normal_distribution<float> normal;
  int64_t bytes = 0;
  for (int64_t i = first; i < first + n; ++i) {
    std::map<std::string, data::ExampleFeature> e;
    auto& x = e["x"];
    x.kind = data::ExampleFeature::Kind::kFloat;
    x.floats.resize(kWidth);
    x.floats[0] = normal(rng);
    x.floats[1] = normal(rng);
    for (int k = 2; k < kWidth; ++k) x.floats[k] = static_cast<float>((k + i) % 4) * 0.01f;
    e["label"].kind = data::ExampleFeature::Kind::kInt64;
    e["label"].ints = {x.floats[0] + x.floats[1] > 0 ? 1 : 0};
    const std::string frame = data::TfRecordFrame(data::SerializeExample(e));
    EDL_CHECK_EQ(gzwrite(f, frame.data(), static_cast<unsigned>(frame.size())),
                 static_cast<int>(frame.size()));
    bytes += static_cast<int64_t>(frame.size());
  }
  EDL_CHECK_EQ(gzclose(f), Z_OK);
  return bytes;
}

// Each process's "NAME: peak RSS X MiB" line (the log of a job), by name.
std::map<std::string, double> PeakRssByProcess(const std::string& log) {
  std::map<std::string, double> peaks;
  const std::regex peak("(master|ps-[0-9]+|worker-[0-9]+): peak RSS ([0-9.]+) MiB");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), peak); it != std::sregex_iterator();
       ++it) {
    peaks[(*it)[1]] = std::stod((*it)[2]);
  }
  return peaks;
}

TEST(DataScale, EveryProcessOfAJobStaysWithinABoundItsDataSetExceedsEightfold) {
  TempDir dir;
  const int kShards = 16;
  const int64_t kPerShard = 16500;  // 16 x 16500 x ~4.1 KB = 1.08 GB
  int64_t bytes = 0;
  for (int s = 0; s < kShards; ++s) {
    char name[32];
    std::snprintf(name, sizeof name, "train-%02d.tfrecord.gz", s);
    bytes += WriteShard(dir.File(name), s * kPerShard, kPerShard);
  }
  WriteShard(dir.File("valid.tfrecord.gz"), 1 << 30, 4000);
  ASSERT_GE(bytes, 8 * kBoundMiB << 20) << "the data set must exceed the bound eightfold";
  WriteText(dir.File("model.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "rule", "layers": [
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1024], "name": "in"}},
      {"class_name": "Dense", "config": {"name": "hidden", "units": 16, "activation": "relu"}},
      {"class_name": "Dense", "config": {"name": "out", "units": 2}}]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
    "metrics": ["accuracy"],
    "input": {"format": "tfrecord", "label": "label", "numeric": ["x"]}
  })");
  RunResult r =
      RunEdl({"train", "--job_name=scale", "--jobs_dir=" + dir.path(),
              "--model_def=" + dir.File("model.json"),
              "--training_data=" + dir.File("train-*.tfrecord.gz"),
              "--validation_data=" + dir.File("valid.tfrecord.gz"), "--minibatch_size=256",
              "--num_workers=2", "--num_ps_pods=2", "--grace_period=5", "--progress_bar=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t records = kShards * kPerShard;
  EXPECT_NE(r.out.find("epoch 1: " + std::to_string(records) + "/" + std::to_string(records) +
                       " records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.out;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.out, m, std::regex("evaluation at version [0-9]+: .*accuracy ([0-9.]+)")))
      << r.out;
  EXPECT_GE(std::stod(m[1]), 0.95) << r.out;
  // Every process reports its peak once, within the bound.
  const std::map<std::string, double> peaks = PeakRssByProcess(r.err);
  for (const char* who : {"master", "ps-0", "ps-1", "worker-0", "worker-1"}) {
    ASSERT_TRUE(peaks.count(who)) << who << " logged no peak RSS\n" << r.err;
    EXPECT_LE(peaks.at(who), kBoundMiB)
        << who << " peaked at " << peaks.at(who) << " MiB while streaming " << (bytes >> 20)
        << " MiB of data";
    std::printf("%s: peak RSS %.1f MiB (data set %lld MiB)\n", who, peaks.at(who),
                static_cast<long long>(bytes >> 20));
  }
}

TEST(DataScale, AnImageFolderWhosePixelsExceedTheBoundEightfoldIsStreamedFileByFile) {
  // 22,000 RGB JPEGs of 64 x 64 (PIL): 48 KiB each as the model's floats,
  // 1.03 GiB decoded; each worker decodes only its tasks' files.
  TempDir dir;
  const std::string cmd = "/usr/bin/python3 " + SourceDir() + "/scripts/fashion_mnist_images.py " +
                          dir.File("fm") +
                          " --format jpg --size 64 --rgb --count 22000 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const int64_t records = 22000, decoded = records * 64 * 64 * 3 * 4;
  ASSERT_GE(decoded, 8 * kBoundMiB << 20) << "the decoded data set must exceed the bound eightfold";
  WriteText(dir.File("model.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "small", "layers": [
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 64, 64, 3], "name": "image"}},
      {"class_name": "RandomFlip", "config": {"name": "flip", "mode": "horizontal"}},
      {"class_name": "Conv2D", "config": {"name": "conv", "filters": 8, "kernel_size": [4, 4], "strides": [4, 4], "activation": "relu"}},
      {"class_name": "Flatten", "config": {"name": "flat"}},
      {"class_name": "Dense", "config": {"name": "logits", "units": 10}}]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.003}},
    "metrics": ["accuracy"],
    "input": {"image": {"size": [64, 64], "channels": 3}}
  })");
  RunResult r =
      RunEdl({"train", "--job_name=images", "--jobs_dir=" + dir.path(),
              "--model_def=" + dir.File("model.json"), "--training_data=" + dir.File("fm/train"),
              "--validation_data=" + dir.File("fm/test"), "--minibatch_size=128", "--num_workers=2",
              "--num_ps_pods=1", "--grace_period=5", "--progress_bar=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("epoch 1: 22000/22000 records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.out;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.out, m, std::regex("evaluation at version [0-9]+: .*accuracy ([0-9.]+)")))
      << r.out;
  EXPECT_GE(std::stod(m[1]), 0.7) << r.out;
  const std::map<std::string, double> peaks = PeakRssByProcess(r.err);
  for (const char* who : {"master", "ps-0", "worker-0", "worker-1"}) {
    ASSERT_TRUE(peaks.count(who)) << who << " logged no peak RSS\n" << r.err;
    EXPECT_LE(peaks.at(who), kBoundMiB) << who << " peaked at " << peaks.at(who) << " MiB over "
                                        << (decoded >> 20) << " MiB of decoded pixels";
    std::printf("%s: peak RSS %.1f MiB (decoded pixels %lld MiB)\n", who, peaks.at(who),
                static_cast<long long>(decoded >> 20));
  }
}

}  // namespace
}  // namespace edl::testing
