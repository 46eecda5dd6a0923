#include "roles/cluster/local_cluster.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "tests/roles/cluster/line_collector.h"

namespace edl::roles::cluster {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProcessSpec Shell(const std::string& name, const std::string& script,
                  std::map<std::string, std::string> env = {}) {
  return ProcessSpec{name, {"-c", script}, std::move(env)};
}

// Gone: no such process, or a zombie that only init can reap.
bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && line.size() > paren + 2 && line[paren + 2] == 'Z';
}

TEST(LocalCluster, LaunchesAProcessAndReportsItsExitCode) {
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  ASSERT_TRUE(cluster.Launch(Shell("worker-1", "exit 3")).ok());
  auto exit = cluster.WaitExit(seconds(10));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->name, "worker-1");
  EXPECT_EQ(exit->incarnation, 1);
  EXPECT_FALSE(exit->signaled);
  EXPECT_EQ(exit->code, 3);
  EXPECT_TRUE(cluster.Running().empty());
  EXPECT_FALSE(cluster.WaitExit(milliseconds(0)).has_value());
}

TEST(LocalCluster, ReportsAProcessKilledBySignalAsSignaledWithTheSignalNumber) {
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  ASSERT_TRUE(cluster.Launch(Shell("worker-1", "kill -9 $$")).ok());
  auto exit = cluster.WaitExit(seconds(10));
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->code, SIGKILL);
  EXPECT_EQ(exit->ToString(), "worker-1 (incarnation 1) killed by signal 9");
}

TEST(LocalCluster, NumbersTheIncarnationsOfEachName) {
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  for (int64_t expected : {1, 2}) {
    ASSERT_TRUE(cluster.Launch(Shell("worker-1", "exit 0")).ok());
    auto exit = cluster.WaitExit(seconds(10));
    ASSERT_TRUE(exit.has_value());
    EXPECT_EQ(exit->incarnation, expected);
  }
  ASSERT_TRUE(cluster.Launch(Shell("ps-0", "exit 0")).ok());
  auto exit = cluster.WaitExit(seconds(10));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->name, "ps-0");
  EXPECT_EQ(exit->incarnation, 1);
}

TEST(LocalCluster, RejectsASecondProcessOfTheSameNameWhileTheFirstRuns) {
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  ASSERT_TRUE(cluster.Launch(Shell("worker-1", "exec sleep 100")).ok());
  Status again = cluster.Launch(Shell("worker-1", "exit 0"));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(cluster.Running(), std::vector<std::string>{"worker-1"});
  EXPECT_EQ(cluster.Launch(Shell("", "exit 0")).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(cluster.Signal("worker-1", SIGKILL).ok());
  auto exit = cluster.WaitExit(seconds(10));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->incarnation, 1);
}

TEST(LocalCluster, ReportsABinaryThatCannotBeExecuted) {
  LineCollector out;
  LocalCluster cluster("/nonexistent/edl", out.Sink());
  Status s = cluster.Launch(Shell("worker-1", "exit 0"));
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("/nonexistent/edl"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("worker-1"), std::string::npos) << s.message();
  EXPECT_TRUE(cluster.Running().empty());
  EXPECT_FALSE(cluster.WaitExit(milliseconds(0)).has_value());
}

TEST(LocalCluster, ForwardsStdoutAndStderrLinesPrefixedBeforeReportingTheExit) {
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  ASSERT_TRUE(cluster.Launch(Shell("worker-1", "echo hello; echo world >&2; printf tail")).ok());
  ASSERT_TRUE(cluster.WaitExit(seconds(10)).has_value());
  EXPECT_EQ(out.Lines(),
            (std::vector<std::string>{"[worker-1] hello", "[worker-1] world", "[worker-1] tail"}));
}

TEST(LocalCluster, PassesTheEnvironmentOverridingInheritedVariables) {
  ASSERT_EQ(setenv("EDL_CLUSTER_TEST_INHERITED", "from parent", 1), 0);
  ASSERT_EQ(setenv("EDL_CLUSTER_TEST_OVERRIDDEN", "old", 1), 0);
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  ASSERT_TRUE(cluster
                  .Launch(Shell(
                      "p",
                      "echo \"$EDL_ROLE\"; echo \"$EDL_CLUSTER_TEST_INHERITED\"; "
                      "echo \"$EDL_CLUSTER_TEST_OVERRIDDEN\"",
                      {{"EDL_ROLE", "worker with spaces"}, {"EDL_CLUSTER_TEST_OVERRIDDEN", "new"}}))
                  .ok());
  ASSERT_TRUE(cluster.WaitExit(seconds(10)).has_value());
  EXPECT_EQ(out.Lines(),
            (std::vector<std::string>{"[p] worker with spaces", "[p] from parent", "[p] new"}));
  unsetenv("EDL_CLUSTER_TEST_INHERITED");
  unsetenv("EDL_CLUSTER_TEST_OVERRIDDEN");
}

TEST(LocalCluster, SignalDeliversSigtermToTheProcess) {
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  ASSERT_TRUE(cluster
                  .Launch(Shell("worker-1",
                                "trap 'echo got-term; exit 7' TERM; echo ready; "
                                "while :; do sleep 1; done"))
                  .ok());
  ASSERT_TRUE(out.WaitFor("[worker-1] ready"));
  ASSERT_TRUE(cluster.Signal("worker-1", SIGTERM).ok());
  auto exit = cluster.WaitExit(seconds(10));
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->signaled);
  EXPECT_EQ(exit->code, 7);
  EXPECT_TRUE(out.WaitFor("[worker-1] got-term"));
  EXPECT_EQ(cluster.Signal("worker-1", SIGTERM).code(), StatusCode::kNotFound);
}

// Stdin is an empty pipe (end of file at once), so that no /dev/null is needed.
TEST(LocalCluster, ChildrenInheritNoFileDescriptorsAndReadAnEmptyStdin) {
  int fd = open("/dev/null", O_RDONLY);  // deliberately not close-on-exec
  ASSERT_GE(fd, 3);
  LineCollector out;
  LocalCluster cluster("/bin/sh", out.Sink());
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  ASSERT_TRUE(cluster
                  .Launch(Shell("p", "if [ -e " + path +
                                         " ]; then echo open; else echo closed; fi; "
                                         "readlink /proc/self/fd/0 | cut -d: -f1; wc -c"))
                  .ok());
  ASSERT_TRUE(cluster.WaitExit(seconds(10)).has_value());
  close(fd);
  EXPECT_EQ(out.Lines(), (std::vector<std::string>{"[p] closed", "[p] pipe", "[p] 0"}));
}

TEST(LocalCluster, NeverInterleavesLinesOfConcurrentChildrenOnStderr) {
  // Capture this process's stderr, where the default sink writes.
  char path[] = "/tmp/edl_cluster_stderr_XXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  ASSERT_GE(dup2(file, STDERR_FILENO), 0);
  constexpr int kLines = 2000;
  const std::string pad(150, 'x');
  {
    LocalCluster cluster("/bin/sh");
    for (const char* name : {"a", "b", "c"}) {
      std::string script = "i=0; while [ $i -lt " + std::to_string(kLines) +
                           " ]; do echo \"line-$i-" + pad + "\"; i=$((i+1)); done";
      Status s = cluster.Launch(Shell(name, script));
      if (!s.ok()) break;
    }
    for (int i = 0; i < 3; ++i) {
      if (!cluster.WaitExit(seconds(30))) break;
    }
  }
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(file);
  std::ifstream in(path);
  std::map<std::string, int> next;
  const std::regex pattern(R"(\[(a|b|c)\] line-(\d+)-(x*))");
  std::string line;
  int bad = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '[') continue;  // a log line of this process
    std::smatch m;
    if (!std::regex_match(line, m, pattern) || m[3].length() != 150 ||
        std::stoi(m[2]) != next[m[1]]) {
      if (++bad < 5) ADD_FAILURE() << "mangled or out-of-order line: " << line;
      continue;
    }
    ++next[m[1]];
  }
  unlink(path);
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(next, (std::map<std::string, int>{{"a", kLines}, {"b", kLines}, {"c", kLines}}));
}

TEST(LocalCluster, DestructorTerminatesKillsAndReapsEveryChild) {
  LineCollector out;
  std::vector<pid_t> pids;
  auto start = std::chrono::steady_clock::now();
  {
    LocalCluster cluster("/bin/sh", out.Sink(), milliseconds(300));
    ASSERT_TRUE(cluster.Launch(Shell("obedient", "exec sleep 100")).ok());
    ASSERT_TRUE(cluster.Launch(Shell("stubborn", "trap '' TERM; echo ready; exec sleep 100")).ok());
    ASSERT_TRUE(out.WaitFor("[stubborn] ready"));
    for (const auto& name : cluster.Running()) pids.push_back(*cluster.Pid(name));
    start = std::chrono::steady_clock::now();
  }
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) {
    errno = 0;
    EXPECT_EQ(kill(pid, 0), -1) << "pid " << pid << " still exists";
    EXPECT_EQ(errno, ESRCH);
  }
  // The stubborn child ignored SIGTERM, so it took the grace period and SIGKILL.
  EXPECT_GE(took, milliseconds(300));
}

// The helper process: launches a child through a LocalCluster, reports its
// pid on `fd`, then waits to be killed. Never returns.
[[noreturn]] void RunHelper(int fd) {
  {
    LocalCluster cluster("/bin/sh", [](const std::string&) {});
    if (cluster.Launch(Shell("orphan", "exec sleep 1000")).ok()) {
      pid_t pid = *cluster.Pid("orphan");
      if (write(fd, &pid, sizeof pid) != sizeof pid) _exit(2);
    }
    for (;;) pause();
  }
}

TEST(LocalCluster, ChildrenDieWhenTheParentIsKilled) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    close(fds[0]);
    RunHelper(fds[1]);
  }
  close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  pid_t grandchild = -1;
  bool ready =
      poll(&p, 1, 10000) == 1 && read(fds[0], &grandchild, sizeof grandchild) == sizeof grandchild;
  close(fds[0]);
  kill(helper, SIGKILL);
  int status;
  ASSERT_EQ(waitpid(helper, &status, 0), helper);
  ASSERT_TRUE(ready) << "the helper did not launch its child";
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(Eventually([&] { return ProcessGone(grandchild); }))
      << "pid " << grandchild << " outlived its parent";
  if (!ProcessGone(grandchild)) kill(grandchild, SIGKILL);
}

}  // namespace
}  // namespace edl::roles::cluster
