// `--device` through the real binary on a machine without a GPU: cuda fails
// with the reason (the missing plugin and driver), auto trains on the CPU.
// Skipped where the driver reports a GPU.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "tensor/gpu_info.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

const std::string kTest = std::string(EDL_FASHION_MNIST) + "/t10k-images-idx3-ubyte.gz";

std::vector<std::string> TrainArgs(const std::string& device) {
  return {"train",
          "--distribution_strategy=Local",
          "--model_def=zoo:fashion_mnist_mlp",
          "--training_data=" + kTest,
          "--max_step=3",
          "--num_threads=1",
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

TEST(TrainOnDevice, ADistributedJobAskingForCudaWithoutAGpuFailsBeforeTheJobExists) {
  if (!tensor::DescribeGpus().devices.empty()) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  RunResult r = RunEdl({"train", "--distribution_strategy=AllreduceStrategy",
                        "--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTest,
                        "--device=cuda", "--job_name=nogpu", "--jobs_dir=" + dir.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--device=cuda: cannot use the GPU"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("nogpu"))) << "the job's directory was created";
  EXPECT_TRUE(FindPids({"--job_name=nogpu"}).empty());
}

TEST(TrainOnDevice, AMasterWhoseWorkersAllFailForGoodFailsTheJobInsteadOfWaiting) {
  if (!tensor::DescribeGpus().devices.empty()) GTEST_SKIP() << "this machine has a GPU";
  // The master started directly (past the client's check): its workers
  // cannot use the GPU, exit non-zero and are given up on.
  TempDir dir;
  WriteText(dir.File("secret"), "0123456789abcdef0123456789abcdef");
  ASSERT_EQ(::chmod(dir.File("secret").c_str(), 0600), 0);
  RunResult r = RunEdl({"master", "--job_name=allfail", "--secret_file=" + dir.File("secret"),
                        "--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTest,
                        "--num_workers=2", "--num_ps_pods=1", "--device=cuda",
                        "--relaunch_on_worker_failure=0", "--grace_period=2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("every worker failed for good"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--device=cuda: cannot use the GPU"), std::string::npos) << r.err;
}

TEST(TrainOnDevice, AnUnknownDeviceIsAFlagError) {
  RunResult r = RunEdl(TrainArgs("tpu"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace edl::testing
