// The zoo's ResNet-14 (the GPU benchmark's larger model) trains through the
// real binary on CIFAR-10-shaped IDX data with rank-4 records.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "data/idx_file.h"
#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

TEST(ZooResnet, TrainsAFewStepsOnCifarShapedImagesAndExportsAModelThatEvaluates) {
  TempDir dir;
  const int64_t n = 96;
  std::mt19937 rng(3);
  std::vector<uint8_t> images(n * 32 * 32 * 3), labels(n);
  for (auto& b : images) b = static_cast<uint8_t>(rng() & 0xff);
  for (auto& l : labels) l = static_cast<uint8_t>(rng() % 10);
  WriteText(dir.File("c-images-idx3-ubyte"), data::EncodeIdx({n, 32, 32, 3}, images));
  WriteText(dir.File("c-labels-idx1-ubyte"), data::EncodeIdx({n}, labels));

  RunResult r = RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:cifar10_resnet",
                        "--training_data=" + dir.File("c-images-idx3-ubyte"),
                        "--minibatch_size=32", "--num_epochs=2", "--num_threads=1",
                        "--output=" + dir.File("model")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(6 steps, 192 samples"), std::string::npos) << r.out;
  const double loss = Metric(r.out, "loss");
  EXPECT_TRUE(std::isfinite(loss) && loss > 0) << r.out;
  RunResult e = RunEdl({"evaluate", "--checkpoint_dir_for_init=" + dir.File("model"),
                        "--validation_data=" + dir.File("c-images-idx3-ubyte")});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_GE(Metric(e.out, "accuracy"), 0.0) << e.out;
}

}  // namespace
}  // namespace edl::testing
