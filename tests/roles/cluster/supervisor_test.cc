#include "roles/cluster/supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <set>

#include "base/clock.h"
#include "roles/cluster/local_cluster.h"
#include "tests/roles/cluster/line_collector.h"

namespace edl::roles::cluster {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProcessSpec Shell(const std::string& name, const std::string& script) {
  return ProcessSpec{name, {"-c", script}, {}};
}

// A supervisor over real child processes, recording its callbacks.
class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest() : cluster_("/bin/sh", out_.Sink()), supervisor_(cluster_, clock_) {
    supervisor_.OnExit([this](const ProcessExit& exit, bool will_relaunch) {
      exits_.push_back({exit, will_relaunch});
    });
    supervisor_.OnGaveUp([this](const std::string& name, const std::string& reason) {
      gave_up_.push_back({name, reason});
    });
  }

  // Steps the supervisor until `condition` holds; false after 10 s.
  bool StepUntil(const std::function<bool()>& condition) {
    auto deadline = std::chrono::steady_clock::now() + seconds(10);
    while (!condition()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      supervisor_.Step(milliseconds(20));
    }
    return true;
  }
  bool StepUntilExits(size_t n) {
    return StepUntil([&] { return exits_.size() >= n; });
  }
  // Waits for `name` to run with a pid other than `old_pid`.
  pid_t WaitForPid(const std::string& name, pid_t old_pid = -1) {
    pid_t pid = -1;
    Eventually([&] {
      auto p = cluster_.Pid(name);
      pid = p ? *p : -1;
      return pid > 0 && pid != old_pid;
    });
    return pid;
  }

  struct Exit {
    ProcessExit exit;
    bool will_relaunch;
  };
  LineCollector out_;
  FakeClock clock_;
  LocalCluster cluster_;
  Supervisor supervisor_;
  std::vector<Exit> exits_;
  std::vector<std::pair<std::string, std::string>> gave_up_;
};

TEST_F(SupervisorTest, RelaunchesAProcessKilledByKill9AsTheNextIncarnation) {
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "exec sleep 100")).ok());
  pid_t first = WaitForPid("worker-1");
  ASSERT_GT(first, 0);
  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_TRUE(StepUntilExits(1));
  EXPECT_TRUE(exits_[0].exit.signaled);
  EXPECT_EQ(exits_[0].exit.code, SIGKILL);
  EXPECT_EQ(exits_[0].exit.incarnation, 1);
  EXPECT_TRUE(exits_[0].will_relaunch);
  pid_t second = WaitForPid("worker-1", first);
  ASSERT_GT(second, 0);
  EXPECT_EQ(supervisor_.Relaunches("worker-1"), 1);

  ASSERT_EQ(kill(second, SIGKILL), 0);
  ASSERT_TRUE(StepUntilExits(2));
  EXPECT_EQ(exits_[1].exit.incarnation, 2);
  EXPECT_TRUE(exits_[1].will_relaunch);
  EXPECT_GT(WaitForPid("worker-1", second), 0);
  EXPECT_EQ(supervisor_.Relaunches("worker-1"), 2);
  EXPECT_TRUE(gave_up_.empty());
}

TEST_F(SupervisorTest, RelaunchesAFailedProcessOnceThenGivesUp) {
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "exit 3")).ok());
  ASSERT_TRUE(StepUntil([&] { return !gave_up_.empty(); }));
  ASSERT_EQ(exits_.size(), 2u);
  EXPECT_EQ(exits_[0].exit.code, 3);
  EXPECT_EQ(exits_[0].exit.incarnation, 1);
  EXPECT_TRUE(exits_[0].will_relaunch);
  EXPECT_EQ(exits_[1].exit.incarnation, 2);
  EXPECT_FALSE(exits_[1].will_relaunch);
  EXPECT_EQ(gave_up_[0].first, "worker-1");
  EXPECT_NE(gave_up_[0].second.find("exited with code 3"), std::string::npos) << gave_up_[0].second;
  EXPECT_TRUE(supervisor_.Desired().empty());
  EXPECT_TRUE(cluster_.Running().empty());
}

TEST_F(SupervisorTest, GivesUpAtOnceWhenNoFailureRelaunchIsAllowed) {
  RelaunchPolicy policy;
  policy.max_failure_relaunches = 0;
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "exit 1"), policy).ok());
  ASSERT_TRUE(StepUntil([&] { return !gave_up_.empty(); }));
  ASSERT_EQ(exits_.size(), 1u);
  EXPECT_FALSE(exits_[0].will_relaunch);
}

TEST_F(SupervisorTest, DoesNotRelaunchAProcessThatExitedZero) {
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "exit 0")).ok());
  ASSERT_TRUE(StepUntilExits(1));
  EXPECT_EQ(exits_[0].exit.code, 0);
  EXPECT_FALSE(exits_[0].will_relaunch);
  EXPECT_TRUE(supervisor_.Desired().empty());
  EXPECT_TRUE(cluster_.Running().empty());
  EXPECT_EQ(supervisor_.Step(milliseconds(0)), 0);
  EXPECT_TRUE(gave_up_.empty());
}

TEST_F(SupervisorTest, ScalingDownStopsTheRemovedProcessWithoutRelaunch) {
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "exec sleep 100")).ok());
  ASSERT_TRUE(supervisor_.Add(Shell("worker-2", "exec sleep 100")).ok());
  ASSERT_TRUE(supervisor_.SetDesired({Shell("worker-1", "exec sleep 100")}).ok());
  EXPECT_EQ(supervisor_.Desired(), std::vector<std::string>{"worker-1"});
  ASSERT_TRUE(StepUntilExits(1));
  EXPECT_EQ(exits_[0].exit.name, "worker-2");
  EXPECT_TRUE(exits_[0].exit.signaled);
  EXPECT_EQ(exits_[0].exit.code, SIGTERM);
  EXPECT_FALSE(exits_[0].will_relaunch);
  EXPECT_TRUE(supervisor_.Stopping().empty());
  EXPECT_EQ(cluster_.Running(), std::vector<std::string>{"worker-1"});
  EXPECT_EQ(supervisor_.Remove("worker-2").code(), StatusCode::kNotFound);
}

TEST_F(SupervisorTest, ScalingUpLaunchesTheNewNames) {
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "exec sleep 100")).ok());
  ASSERT_TRUE(
      supervisor_
          .SetDesired({Shell("worker-1", "exec sleep 100"), Shell("worker-2", "exec sleep 100")})
          .ok());
  EXPECT_EQ(cluster_.Running(), (std::vector<std::string>{"worker-1", "worker-2"}));
  EXPECT_EQ(supervisor_.Add(Shell("worker-2", "exit 0")).code(), StatusCode::kAlreadyExists);
}

TEST_F(SupervisorTest, RemoveSendsSigkillAfterTheGracePeriod) {
  ASSERT_TRUE(supervisor_.Add(Shell("stubborn", "trap '' TERM; echo ready; exec sleep 100")).ok());
  ASSERT_TRUE(out_.WaitFor("[stubborn] ready"));
  ASSERT_TRUE(supervisor_.Remove("stubborn").ok());
  EXPECT_EQ(supervisor_.Stopping(), std::vector<std::string>{"stubborn"});
  EXPECT_EQ(supervisor_.Add(Shell("stubborn", "exit 0")).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(supervisor_.Step(milliseconds(100)), 0);  // SIGTERM is ignored
  clock_.AdvanceSeconds(5);
  ASSERT_TRUE(StepUntilExits(1));
  EXPECT_TRUE(exits_[0].exit.signaled);
  EXPECT_EQ(exits_[0].exit.code, SIGKILL);
  EXPECT_FALSE(exits_[0].will_relaunch);
  EXPECT_TRUE(supervisor_.Stopping().empty());
}

TEST_F(SupervisorTest, AProcessRemovedWithALongerGraceIsNotKilledAtTheDefaultOne) {
  ASSERT_TRUE(supervisor_.Add(Shell("ps-0", "trap '' TERM; echo ready; exec sleep 100")).ok());
  ASSERT_TRUE(out_.WaitFor("[ps-0] ready"));
  ASSERT_TRUE(supervisor_.Remove("ps-0", SIGTERM, seconds(600)).ok());
  clock_.AdvanceSeconds(5);  // the default grace period has passed
  EXPECT_EQ(supervisor_.Step(milliseconds(100)), 0);
  EXPECT_EQ(supervisor_.Step(milliseconds(200)), 0);  // a SIGKILL would show here
  EXPECT_EQ(supervisor_.Stopping(), std::vector<std::string>{"ps-0"});
  clock_.AdvanceSeconds(596);
  ASSERT_TRUE(StepUntilExits(1));
  EXPECT_TRUE(exits_[0].exit.signaled);
  EXPECT_EQ(exits_[0].exit.code, SIGKILL);
}

TEST_F(SupervisorTest, DelaysRelaunchesOfACrashLoopBeyondTheRateLimit) {
  RelaunchPolicy policy;
  policy.max_relaunches_per_minute = 2;
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "kill -9 $$"), policy).ok());
  ASSERT_TRUE(StepUntilExits(3));
  EXPECT_EQ(supervisor_.Relaunches("worker-1"), 2);
  EXPECT_TRUE(supervisor_.RelaunchDelayed("worker-1"));
  EXPECT_TRUE(cluster_.Running().empty());
  EXPECT_TRUE(exits_[2].will_relaunch);
  EXPECT_EQ(supervisor_.Desired(), std::vector<std::string>{"worker-1"});

  clock_.AdvanceSeconds(59);
  supervisor_.Step(milliseconds(0));
  EXPECT_TRUE(supervisor_.RelaunchDelayed("worker-1"));
  EXPECT_EQ(exits_.size(), 3u);

  clock_.AdvanceSeconds(1);
  supervisor_.Step(milliseconds(0));
  EXPECT_FALSE(supervisor_.RelaunchDelayed("worker-1"));
  EXPECT_EQ(supervisor_.Relaunches("worker-1"), 3);
  ASSERT_TRUE(StepUntilExits(4));
  EXPECT_EQ(exits_[3].exit.incarnation, 4);
  EXPECT_TRUE(gave_up_.empty());
}

TEST_F(SupervisorTest, RemovingAProcessWaitingForARelaunchForgetsIt) {
  RelaunchPolicy policy;
  policy.max_relaunches_per_minute = 0;
  ASSERT_TRUE(supervisor_.Add(Shell("worker-1", "kill -9 $$"), policy).ok());
  ASSERT_TRUE(StepUntilExits(1));
  EXPECT_TRUE(supervisor_.RelaunchDelayed("worker-1"));
  ASSERT_TRUE(supervisor_.Remove("worker-1").ok());
  EXPECT_TRUE(supervisor_.Desired().empty());
  EXPECT_TRUE(supervisor_.Stopping().empty());
  clock_.AdvanceSeconds(120);
  supervisor_.Step(milliseconds(0));
  EXPECT_TRUE(cluster_.Running().empty());
}

// A cluster whose launches can be made to fail, for what real processes
// cannot easily show.
class ScriptedCluster : public Cluster {
 public:
  Status Launch(const ProcessSpec& spec) override {
    if (!launch_status.ok()) return launch_status;
    running.insert(spec.name);
    return Status::Ok();
  }
  Status Signal(const std::string& name, int) override {
    return running.count(name) ? Status::Ok() : NotFound(name);
  }
  std::optional<ProcessExit> WaitExit(milliseconds) override {
    if (exits.empty()) return std::nullopt;
    ProcessExit e = exits.front();
    exits.pop_front();
    running.erase(e.name);
    return e;
  }
  std::vector<std::string> Running() const override { return {running.begin(), running.end()}; }
  Status launch_status;
  std::set<std::string> running;
  std::deque<ProcessExit> exits;
};

TEST(Supervisor, GivesUpWhenARelaunchFails) {
  ScriptedCluster cluster;
  FakeClock clock;
  Supervisor supervisor(cluster, clock);
  std::vector<std::string> reasons;
  supervisor.OnGaveUp(
      [&](const std::string&, const std::string& reason) { reasons.push_back(reason); });
  ASSERT_TRUE(supervisor.Add(ProcessSpec{"ps-0", {}, {}}).ok());
  cluster.launch_status = Unavailable("no more processes");
  cluster.exits.push_back(ProcessExit{"ps-0", 1, true, SIGKILL, false, false, {}});
  EXPECT_EQ(supervisor.Step(milliseconds(0)), 1);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("no more processes"), std::string::npos) << reasons[0];
  EXPECT_TRUE(supervisor.Desired().empty());
}

TEST(Supervisor, ReportsExitsOfProcessesItDidNotStart) {
  ScriptedCluster cluster;
  FakeClock clock;
  Supervisor supervisor(cluster, clock);
  std::vector<bool> relaunch;
  supervisor.OnExit([&](const ProcessExit&, bool r) { relaunch.push_back(r); });
  cluster.exits.push_back(ProcessExit{"stranger", 1, true, SIGKILL, false, false, {}});
  EXPECT_EQ(supervisor.Step(milliseconds(0)), 1);
  EXPECT_EQ(relaunch, std::vector<bool>{false});
  EXPECT_TRUE(supervisor.Desired().empty());
}

TEST(Supervisor, CallbacksMayCallBackIntoTheSupervisor) {
  ScriptedCluster cluster;
  FakeClock clock;
  Supervisor supervisor(cluster, clock);
  supervisor.OnExit([&](const ProcessExit& exit, bool) {
    // A master replacing a finished worker by a new name.
    Status s = supervisor.Add(ProcessSpec{exit.name + "-next", {}, {}});
    EXPECT_TRUE(s.ok()) << s.ToString();
  });
  ASSERT_TRUE(supervisor.Add(ProcessSpec{"worker-1", {}, {}}).ok());
  cluster.exits.push_back(ProcessExit{"worker-1", 1, false, 0, false, false, {}});
  EXPECT_EQ(supervisor.Step(milliseconds(0)), 1);
  EXPECT_EQ(supervisor.Desired(), std::vector<std::string>{"worker-1-next"});
}

TEST(Supervisor, RelaunchesAProcessTheClusterTookAwayEvenIfItExitedCleanly) {
  ScriptedCluster cluster;
  FakeClock clock;
  Supervisor supervisor(cluster, clock);
  RelaunchPolicy policy;
  policy.max_failure_relaunches = 0;
  ASSERT_TRUE(supervisor.Add(ProcessSpec{"worker-0", {}, {}}, policy).ok());
  for (int i = 0; i < 3; ++i) {
    // A preempted worker hands its task back and exits 0.
    cluster.exits.push_back(ProcessExit{"worker-0", i + 1, false, 0, true, false, "preempted"});
    EXPECT_EQ(supervisor.Step(milliseconds(0)), 1);
    EXPECT_EQ(supervisor.Desired(), std::vector<std::string>{"worker-0"});
    EXPECT_EQ(cluster.running.count("worker-0"), 1u);
  }
  EXPECT_EQ(supervisor.Relaunches("worker-0"), 3);
}

TEST(Supervisor, DoesNotRelaunchAnOomKilledProcess) {
  ScriptedCluster cluster;
  FakeClock clock;
  Supervisor supervisor(cluster, clock);
  std::vector<std::string> reasons;
  supervisor.OnGaveUp(
      [&](const std::string&, const std::string& reason) { reasons.push_back(reason); });
  ASSERT_TRUE(supervisor.Add(ProcessSpec{"worker-0", {}, {}}).ok());
  cluster.exits.push_back(ProcessExit{"worker-0", 1, true, SIGKILL, false, true, "OOMKilled"});
  EXPECT_EQ(supervisor.Step(milliseconds(0)), 1);
  EXPECT_TRUE(supervisor.Desired().empty());
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("OOMKilled"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[0].find("memory"), std::string::npos) << reasons[0];
}

TEST(Supervisor, AnOwnerThatReplacedADeadOneAdoptsRunningProcessesAndKeepsTheirFailureCounts) {
  ScriptedCluster cluster;
  cluster.running.insert("worker-0");  // started by the dead owner
  FakeClock clock;
  Supervisor supervisor(cluster, clock);
  std::vector<std::string> gave_up;
  supervisor.OnGaveUp(
      [&](const std::string& name, const std::string&) { gave_up.push_back(name); });
  RelaunchPolicy policy;
  policy.max_failure_relaunches = 2;
  EXPECT_EQ(supervisor.Adopt(ProcessSpec{"worker-9", {}, {}}, policy).code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(supervisor.Adopt(ProcessSpec{"worker-0", {}, {}}, policy).ok());
  EXPECT_EQ(supervisor.Desired(), std::vector<std::string>{"worker-0"});
  supervisor.SetFailureRelaunches("worker-0", 1);  // the dead owner used one
  cluster.exits.push_back(ProcessExit{"worker-0", 1, false, 1, false, false, ""});
  supervisor.Step(milliseconds(0));
  EXPECT_EQ(supervisor.FailureRelaunches().at("worker-0"), 2);
  EXPECT_TRUE(gave_up.empty());
  cluster.exits.push_back(ProcessExit{"worker-0", 2, false, 1, false, false, ""});
  supervisor.Step(milliseconds(0));
  EXPECT_EQ(gave_up, std::vector<std::string>{"worker-0"});  // 2 of 2 used
}

}  // namespace
}  // namespace edl::roles::cluster
