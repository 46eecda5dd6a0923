// A master that survives its own death (docs/distributed.md), end to end on
// the local cluster with real processes: `edl train` hosts the job, the
// master is killed with SIGKILL at chosen moments (mid-epoch right after a
// checkpoint, twice in a row during evaluation, while an allreduce ring
// re-forms), a new master recovers the job from the job directory, adopts the
// running PS and workers, and the job ends with every record trained exactly
// once. A master started on a job's state with other flags is refused.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/testing/job_report.h"
#include "tests/testing/master_kill.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

namespace fs = std::filesystem;

const std::string kData = EDL_FASHION_MNIST;
const std::string kTrain = kData + "/train-images-idx3-ubyte.gz";
const std::string kTest = kData + "/t10k-images-idx3-ubyte.gz";

std::vector<std::string> Job(const std::string& jobs_dir, const std::string& name,
                             std::vector<std::string> extra) {
  std::vector<std::string> args = {"train",
                                   "--job_name=" + name,
                                   "--jobs_dir=" + jobs_dir,
                                   "--grace_period=5",
                                   "--model_def=zoo:fashion_mnist_mlp",
                                   "--training_data=" + kTrain,
                                   "--validation_data=" + kTest};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(MasterFailover, AMasterKilledRightAfterACheckpointIsReplacedAndEveryRecordTrainedOnce) {
  TempDir dir;
  EdlProcess job(Job(dir.path(), "failover",
                     {"--num_epochs=2", "--num_workers=2", "--num_ps_pods=2",
                      "--checkpoint_dir=" + dir.File("ckpt"), "--checkpoint_steps=200"}));
  // Mid-epoch, the moment the first checkpoint is there.
  ASSERT_TRUE(
      WaitFor([&] { return fs::exists(dir.File("ckpt")) && !fs::is_empty(dir.File("ckpt")); }, 90))
      << job.Err();
  KillMaster(dir.path(), "failover", job);
  const nlohmann::json s = JobStatus(dir.path(), "failover");
  EXPECT_EQ(s.value("state", ""), "running") << s.dump();
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("was killed by signal 9; starting a new one"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ps-0 is still running: adopted"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("worker-1 is still running: adopted"), std::string::npos) << r.err;
  // Nothing lost, nothing trained twice: the tasks in flight were reported
  // to the new master by the workers that held them.
  EXPECT_EQ(EpochsTrainedExactlyOnce(r.out), 2) << r.out << r.err;
  EXPECT_NE(r.out.find("master replaced 1 time"), std::string::npos) << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.84) << r.out;
}

TEST(MasterFailover, AMasterKilledTwiceInARowDuringEvaluationStillEndsTheJob) {
  TempDir dir;
  EdlProcess job(
      Job(dir.path(), "twice",
          {"--num_epochs=2", "--num_workers=2", "--num_ps_pods=1", "--evaluation_steps=150"}));
  // While an evaluation round is in flight.
  ASSERT_TRUE(WaitFor(
      [&] {
        const nlohmann::json s = JobStatus(dir.path(), "twice");
        return s.is_object() && s["tasks"]["evaluation"].value("doing", 0) +
                                        s["tasks"]["evaluation"].value("todo", 0) >
                                    0;
      },
      90))
      << job.Err();
  KillMaster(dir.path(), "twice", job);
  KillMaster(dir.path(), "twice", job);  // the new one, at once
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(EpochsTrainedExactlyOnce(r.out), 2) << r.out << r.err;
  EXPECT_NE(r.out.find("master replaced 2 times"), std::string::npos) << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.84) << r.out;
}

TEST(MasterFailover, AnAllreduceRingReformingWhileTheMasterIsReplacedEndsTheJob) {
  TempDir dir;
  EdlProcess job(Job(dir.path(), "ringfail",
                     {"--distribution_strategy=AllreduceStrategy", "--num_epochs=1",
                      "--num_workers=3", "--minibatch_size=64", "--output=" + dir.File("model")}));
  nlohmann::json s;
  ASSERT_TRUE(WaitFor(
      [&] {
        s = JobStatus(dir.path(), "ringfail");
        return Version(s) >= 100 && s.contains("ring") && s["ring"].value("size", 0) == 3;
      },
      90))
      << job.Err();
  // A member dies (the ring re-forms without it) and, at once, the master.
  int victim = -1;
  for (const auto& w : s["workers"]) {
    if (w.value("name", "") == "worker-2") victim = w.value("pid", -1);
  }
  ASSERT_GT(victim, 0) << s.dump();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  KillMaster(dir.path(), "ringfail", job);
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(EpochsWithNothingMissing(r.out), 1) << r.out << r.err;
  EXPECT_NE(r.out.find("master replaced 1 time"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir.File("model"))) << r.err;
}

TEST(MasterFailover, AMasterStartedOnAJobsStateWithOtherFlagsIsRefusedNamingTheFlag) {
  TempDir dir;
  RunResult first =
      RunEdl(Job(dir.path(), "flags",
                 {"--num_epochs=1", "--num_workers=1", "--num_ps_pods=1", "--minibatch_size=512"}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string flags = ReadText(dir.File("flags/master/flags"));
  ASSERT_NE(flags.find("--num_epochs=1"), std::string::npos) << flags;
  // The same job's master by hand, with one flag changed.
  std::vector<std::string> args = {"master"};
  for (size_t start = 0; start < flags.size();) {
    const size_t nl = flags.find('\n', start);
    std::string a = flags.substr(start, nl - start);
    start = nl == std::string::npos ? flags.size() : nl + 1;
    if (a == "master" || a.empty()) continue;
    if (a == "--num_epochs=1") a = "--num_epochs=3";
    args.push_back(a);
  }
  RunResult r = RunEdl(args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--num_epochs is \"3\" but was \"1\""), std::string::npos) << r.err;
}

}  // namespace
}  // namespace edl::testing
