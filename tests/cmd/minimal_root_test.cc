// A job on the local cluster in a root without /dev/null and /dev/urandom (a
// minimal container): the job's secret comes from getrandom(2) and its
// processes' stdin from an empty pipe, so the job runs to its end. Run in a
// private mount namespace (unshare -m, which needs root) with an empty tmpfs
// on /dev; skipped where that is not allowed (and under CI=true, failed).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "tests/testing/job_report.h"
#include "tests/testing/paths.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::testing {
namespace {

// Runs `command` in a mount namespace whose /dev is an empty tmpfs; the
// command's exit code, stdout and stderr go to files in `dir`.
int RunWithoutDev(const TempDir& dir, const std::string& command) {
  const std::string script = "mount -t tmpfs none /dev && exec " + command + " > '" +
                             dir.File("out") + "' 2> '" + dir.File("err") + "'";
  const std::string cmd = "unshare -m --propagation private sh -c \"" + script + "\"";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool CanUnshareMounts() {
  return std::system(
             "unshare -m --propagation private sh -c 'mount -t tmpfs none /mnt' "
             "> /dev/null 2>&1") == 0;
}

TEST(MinimalRoot, ALocalClusterJobRunsWithoutDevNullAndDevUrandom) {
  if (!CanUnshareMounts()) {
    EDL_SKIP_OR_FAIL_IN_CI("unshare -m and mount need root (CAP_SYS_ADMIN)");
  }
  TempDir dir;
  WriteText(dir.File("iris.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "iris", "layers": [
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}},
      {"class_name": "Dense", "config": {"name": "out", "units": 3}}]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
    "metrics": ["accuracy"],
    "input": {"format": "csv", "skip_rows": 1, "header": false}
  })");
  const std::string iris = std::string(EDL_SKLEARN_DATA) + "/iris.csv";
  const int code = RunWithoutDev(
      dir, edl::testing::EdlBinary() +
               " train --distribution_strategy=ParameterServerStrategy --job_name=nodev"
               " --jobs_dir=" +
               dir.File("jobs") + " --num_workers=1 --num_ps_pods=1 --num_epochs=2" +
               " --minibatch_size=16 --model_def=" + dir.File("iris.json") +
               " --training_data=" + iris);
  const std::string out = ReadText(dir.File("out")), err = ReadText(dir.File("err"));
  ASSERT_EQ(code, 0) << out << err;
  EXPECT_EQ(EpochsTrainedExactlyOnce(out), 2) << out;
}

}  // namespace
}  // namespace edl::testing
