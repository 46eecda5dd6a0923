// What scripts and cron jobs use: `edl status --format=text` (one line per
// field) and `edl wait` (the job's exit code, or 124 on --timeout_s).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

const std::string kTest = std::string(EDL_FASHION_MNIST) + "/t10k-images-idx3-ubyte.gz";

std::vector<std::string> Job(const std::string& dir, const std::string& name, int epochs) {
  return {"train",
          "--job_name=" + name,
          "--jobs_dir=" + dir,
          "--grace_period=5",
          "--model_def=zoo:fashion_mnist_mlp",
          "--training_data=" + kTest,
          "--num_epochs=" + std::to_string(epochs),
          "--num_workers=1",
          "--num_ps_pods=1"};
}

TEST(Scripting, StatusAsTextAndWaitGiveAScriptTheStateAndTheOutcome) {
  TempDir dir;
  EdlProcess job(Job(dir.path(), "long", 200));
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "long")) >= 5; }, 60))
      << job.Err();
  RunResult text = RunEdl({"status", "long", "--jobs_dir=" + dir.path(), "--format=text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\nstate: running\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\njob: long\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nworkers[0]: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" name=worker-0 "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\ntasks.training.done: "), std::string::npos) << text.out;
  // Every line is `key: value` (or `key:` for an empty list).
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_match(line, std::regex(R"([a-z_.]+(\[[0-9]+\])?:( .*)?)"))) << line;
  }

  RunResult still = RunEdl({"wait", "long", "--jobs_dir=" + dir.path(), "--timeout_s=0.5"});
  EXPECT_EQ(still.exit_code, 124) << still.err;
  EXPECT_NE(still.err.find("still running"), std::string::npos) << still.err;
  ASSERT_EQ(RunEdl({"stop", "long", "--jobs_dir=" + dir.path()}).exit_code, 0);
  RunResult stopped = RunEdl({"wait", "long", "--jobs_dir=" + dir.path()});
  EXPECT_EQ(stopped.exit_code, 1) << stopped.out << stopped.err;
  EXPECT_NE(stopped.out.find("job long: failed (exit code 1)"), std::string::npos) << stopped.out;
  EXPECT_EQ(job.Wait().exit_code, 1);

  // A job that succeeds, waited for after it ended.
  ASSERT_EQ(RunEdl(Job(dir.path(), "short", 1)).exit_code, 0);
  RunResult done = RunEdl({"wait", "short", "--jobs_dir=" + dir.path()});
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_NE(done.out.find("job short: succeeded"), std::string::npos) << done.out;
  RunResult unknown = RunEdl({"wait", "nosuchjob", "--jobs_dir=" + dir.path()});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("nosuchjob"), std::string::npos) << unknown.err;
  RunResult bad = RunEdl({"status", "short", "--jobs_dir=" + dir.path(), "--format=yaml"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace edl::testing
