// `--device` through the real binary on a machine without a GPU: cuda fails
// with the reason (the missing plugin and driver), auto trains on the CPU.
// Skipped where the driver reports a GPU.
#include <gtest/gtest.h>

#include "tensor/gpu_info.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

const std::string kTest = std::string(EDL_FASHION_MNIST) + "/t10k-images-idx3-ubyte.gz";

std::vector<std::string> TrainArgs(const std::string& device) {
  return {"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
          "--training_data=" + kTest, "--max_step=3", "--num_threads=1",
          "--device=" + device};
}

TEST(TrainOnDevice, CudaWithoutAGpuFailsNamingTheMissingDriver) {
  if (!tensor::DescribeGpus().devices.empty()) GTEST_SKIP() << "this machine has a GPU";
  RunResult r = RunEdl(TrainArgs("cuda"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--device=cuda: cannot use the GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("libcuda.so.1"), std::string::npos) << r.err;
}

TEST(TrainOnDevice, AutoWithoutAGpuTrainsOnTheCpu) {
  if (!tensor::DescribeGpus().devices.empty()) GTEST_SKIP() << "this machine has a GPU";
  RunResult r = RunEdl(TrainArgs("auto"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--device=auto: no usable GPU, training on the CPU"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("final: loss "), std::string::npos) << r.out;
}

TEST(TrainOnDevice, AnUnknownDeviceIsAFlagError) {
  RunResult r = RunEdl(TrainArgs("tpu"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace edl::testing
