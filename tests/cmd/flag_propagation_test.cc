// Every flag a distributed job's processes use reaches them: a job started
// with non-default values of all of them, whose master, PS and worker each
// log (at DEBUG, itself a propagated value) the options they parsed.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

const std::string kData = EDL_FASHION_MNIST;

// The first line of `text` containing `marker` ("" if none).
std::string LineWith(const std::string& text, const std::string& marker) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(marker) != std::string::npos) return line;
  }
  return "";
}

void ExpectFlags(const std::string& line, const std::vector<std::string>& flags) {
  ASSERT_FALSE(line.empty());
  for (const std::string& flag : flags) {
    EXPECT_NE(line.find(" " + flag), std::string::npos) << flag << " missing from: " << line;
  }
}

TEST(FlagPropagation, EveryProcessOfAJobReceivesEveryFlagItUses) {
  TempDir dir;
  const std::vector<std::string> model = {"--num_threads=3", "--seed=7", "--learning_rate=0.002",
                                          "--device=auto", "--adapt_threads=false"};
  const std::vector<std::string> ps = {"--use_async=false",
                                       "--grads_to_wait=2",
                                       "--sync_version_tolerance=1",
                                       "--lr_staleness_modulation=true",
                                       "--checkpoint_dir=" + dir.File("ckpt"),
                                       "--checkpoint_steps=50",
                                       "--keep_checkpoint_max=2"};
  const std::vector<std::string> worker = {"--minibatch_size=32", "--get_model_steps=2",
                                           "--shuffle=false", "--gradient_compression=bf16"};
  const std::vector<std::string> master = {
      "--log_interval=3",       "--progress_bar=false",           "--num_minibatches_per_task=4",
      "--evaluation_steps=100", "--relaunch_on_worker_failure=2", "--grace_period=7"};
  std::vector<std::string> args = {"train",
                                   "--distribution_strategy=ParameterServerStrategy",
                                   "--job_name=flags",
                                   "--jobs_dir=" + dir.path(),
                                   "--model_def=zoo:fashion_mnist_mlp",
                                   "--training_data=" + kData + "/t10k-images-idx3-ubyte.gz",
                                   "--validation_data=" + kData + "/t10k-images-idx3-ubyte.gz",
                                   "--num_workers=2",
                                   "--num_ps_pods=1",
                                   "--log_level=DEBUG"};
  for (const auto* group : {&model, &ps, &worker, &master}) {
    args.insert(args.end(), group->begin(), group->end());
  }
  RunResult r = RunEdl(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(EpochsTrainedExactlyOnce(r.out), 1) << r.out;

  const std::string master_line = LineWith(r.err, "master options:");
  const std::string ps_line = LineWith(r.err, "ps-0 options:");
  const std::string worker_line = LineWith(r.err, "worker-1 options:");
  for (const std::string* line : {&master_line, &ps_line, &worker_line}) {
    ExpectFlags(*line, {"--log_level=DEBUG"});
    ExpectFlags(*line, model);
  }
  ExpectFlags(master_line, ps);
  ExpectFlags(master_line, worker);
  ExpectFlags(master_line, master);
  ExpectFlags(ps_line, ps);
  ExpectFlags(worker_line, worker);

  // --keep_checkpoint_max=2: at most two versions, each complete, the
  // final one among them.
  int versions = 0;
  for (const auto& v : std::filesystem::directory_iterator(dir.File("ckpt"))) {
    ++versions;
    EXPECT_TRUE(std::filesystem::exists(v.path() / "ps-0-of-1" / "manifest.json")) << v.path();
  }
  EXPECT_GE(versions, 1);
  EXPECT_LE(versions, 2);
  EXPECT_NE(r.err.find("ps-0 wrote its final checkpoint to " + dir.File("ckpt")), std::string::npos)
      << r.err;

  // And the processes act on them: 3 threads each, not 1.
  EXPECT_NE(r.err.find("3 threads"), std::string::npos) << r.err;
  EXPECT_NE(LineWith(r.err, "worker worker-0 (id ").find(", 3 threads)"), std::string::npos)
      << r.err;
  EXPECT_NE(LineWith(r.err, "ps-0 of 1: serving on").find(", 3 threads"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace edl::testing
