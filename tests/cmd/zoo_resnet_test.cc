// The zoo's ResNet-14 (the GPU benchmark's larger model), ResNet-50 layout
// and MobileNetV2 train through the real binary on CIFAR-10-shaped IDX data
// with rank-4 records. Each run uses one thread:
// two 2-thread OpenMP teams beside each other on 2 cores stalled for
// minutes in CI.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "data/idx_file.h"
#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

// A planted task: the label (0-3) is the quadrant that is bright in the
// label's colour channel, over uniform noise. Learnable in a few dozen
// steps; chance is 0.25.
void WritePlantedImages(const std::string& dir, const std::string& name, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> images(n * 32 * 32 * 3), labels(n);
  for (int64_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(rng() % 4);
    labels[i] = static_cast<uint8_t>(label);
    uint8_t* image = images.data() + i * 32 * 32 * 3;
    for (int y = 0; y < 32; ++y) {
      for (int x = 0; x < 32; ++x) {
        for (int c = 0; c < 3; ++c) {
          const bool bright = (y / 16) * 2 + (x / 16) == label && c == label % 3;
          image[(y * 32 + x) * 3 + c] =
              static_cast<uint8_t>(bright ? 200 + rng() % 56 : rng() % 128);
        }
      }
    }
  }
  WriteText(dir + "/" + name + "-images-idx3-ubyte", data::EncodeIdx({n, 32, 32, 3}, images));
  WriteText(dir + "/" + name + "-labels-idx1-ubyte", data::EncodeIdx({n}, labels));
}

TEST(ZooResnet, LearnsAPlantedTaskOnCifarShapedImagesAndExportsAModelThatEvaluatesTheSame) {
  TempDir dir;
  WritePlantedImages(dir.path(), "train", 256, 3);
  WritePlantedImages(dir.path(), "test", 128, 4);
  RunResult r = RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:cifar10_resnet",
                        "--training_data=" + dir.File("train-images-idx3-ubyte"),
                        "--validation_data=" + dir.File("test-images-idx3-ubyte"),
                        // Enough steps for batch norm's moving statistics
                        // (momentum 0.99), which evaluation uses, to settle.
                        "--minibatch_size=8", "--num_epochs=10", "--num_threads=1",
                        "--output=" + dir.File("model")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(320 steps, 2560 samples"), std::string::npos) << r.out;
  const double loss = Metric(r.out, "loss");
  EXPECT_TRUE(std::isfinite(loss) && loss > 0) << r.out;
  RunResult e = RunEdl({"evaluate", "--checkpoint_dir_for_init=" + dir.File("model"),
                        "--validation_data=" + dir.File("test-images-idx3-ubyte")});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const double accuracy = Metric(e.out, "accuracy");
  EXPECT_GE(accuracy, 0.9) << e.out << r.out;  // held-out images; chance is 0.25
  EXPECT_NEAR(Metric(r.out, "val_accuracy"), accuracy, 1e-4) << r.out << e.out;
}

// Trains zoo:`model` on 256 planted images (seed `seed`) for `epochs` epochs
// of 16 and checks the held-out accuracy on 128 more (seed + 1).
void ExpectLearnsPlantedImages(const std::string& model, uint32_t seed, int epochs) {
  TempDir dir;
  WritePlantedImages(dir.path(), "train", 256, seed);
  WritePlantedImages(dir.path(), "test", 128, seed + 1);
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:" + model,
              "--training_data=" + dir.File("train-images-idx3-ubyte"),
              "--validation_data=" + dir.File("test-images-idx3-ubyte"), "--minibatch_size=16",
              "--num_epochs=" + std::to_string(epochs), "--num_threads=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double accuracy = Metric(r.out, "val_accuracy");
  EXPECT_GE(accuracy, 0.9) << r.out;  // held-out images; chance is 0.25
  std::printf("%s: held-out accuracy %.4f\n", model.c_str(), accuracy);
}

TEST(ZooResnet50, LearnsThePlantedTaskWithBottleneckBlocks) {
  ExpectLearnsPlantedImages("cifar10_resnet50", 7, 8);
}

TEST(ZooMobilenet, LearnsThePlantedTaskWithDepthwiseConvolutions) {
  ExpectLearnsPlantedImages("mobilenet_v2", 5, 20);
}

}  // namespace
}  // namespace edl::testing
