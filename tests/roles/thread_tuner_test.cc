// ThreadTuner against a simulated machine: step times that depend on the
// team size and on whether the cores are shared, and the CPU wait a shared
// machine makes the process's threads accumulate.
#include "roles/thread_tuner.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

namespace edl::roles {
namespace {

// A machine on which a step with t threads takes step_ms[t] milliseconds
// and, while `shared`, each running thread waits for a CPU for
// wait_fraction of the step.
struct Machine {
  std::map<int, double> step_ms;
  bool shared = false;
  double wait_fraction = 0.5;
  double waited = 0;  // cumulative seconds

  // Runs `steps` steps through the tuner; returns how many ran with each team size.
  std::map<int, int> Run(ThreadTuner& tuner, int steps) {
    std::map<int, int> used;
    int threads = tuner.threads();
    for (int i = 0; i < steps; ++i) {
      const double seconds = step_ms.at(threads) * 1e-3;
      if (shared) waited += wait_fraction * seconds * threads;
      ++used[threads];
      threads = tuner.OnStep(seconds);
    }
    return used;
  }
  std::function<double()> WaitClock() {
    return [this] { return waited; };
  }
};

TEST(ThreadTuner, NeverChangesTheTeamOnAnIdleMachine) {
  Machine m;
  m.step_ms = {{1, 2.0}, {2, 1.0}};
  ThreadTuner tuner(2, m.WaitClock());
  const auto used = m.Run(tuner, 20000);
  EXPECT_EQ(used.at(2), 20000);
  EXPECT_EQ(used.count(1), 0u);
  EXPECT_EQ(tuner.switches(), 0);
}

TEST(ThreadTuner, MovesToOneThreadWhenSharedCoresMakeItFaster) {
  Machine m;
  m.step_ms = {{1, 2.0}, {2, 6.0}};  // two threads stall on each other
  m.shared = true;
  ThreadTuner tuner(2, m.WaitClock());
  const auto used = m.Run(tuner, 5000);
  EXPECT_EQ(tuner.threads(), 1);
  EXPECT_EQ(tuner.switches(), 1);
  // Found within the first two windows: almost every step ran on one thread.
  EXPECT_LE(used.at(2), 2 * ThreadTuner::kMaxWindowSteps) << used.at(2);
}

TEST(ThreadTuner, KeepsTheTeamWhenHalfIsSlowerEvenOnSharedCoresAndProbesLessAndLess) {
  Machine m;
  m.step_ms = {{1, 3.0}, {2, 2.0}};
  m.shared = true;
  ThreadTuner tuner(2, m.WaitClock());
  const auto used = m.Run(tuner, 40000);
  EXPECT_EQ(tuner.threads(), 2);
  EXPECT_EQ(tuner.switches(), 0);
  // Probes back off: well under 5 % of the steps ran on the slower team.
  EXPECT_LT(used.at(1), 40000 / 20) << used.at(1);
}

TEST(ThreadTuner, GrowsBackWhenTheCoresFreeUp) {
  Machine m;
  m.step_ms = {{1, 2.0}, {2, 6.0}};
  m.shared = true;
  ThreadTuner tuner(2, m.WaitClock());
  m.Run(tuner, 2000);
  ASSERT_EQ(tuner.threads(), 1);
  m.shared = false;
  m.step_ms = {{1, 2.0}, {2, 1.1}};
  m.Run(tuner, 2000);
  EXPECT_EQ(tuner.threads(), 2);
  EXPECT_EQ(tuner.switches(), 2);
}

TEST(ThreadTuner, HalvesAndDoublesALargerTeam) {
  Machine m;
  m.step_ms = {{1, 4.0}, {2, 2.5}, {4, 2.0}, {8, 9.0}};
  m.shared = true;
  ThreadTuner tuner(8, m.WaitClock());
  m.Run(tuner, 20000);
  EXPECT_EQ(tuner.threads(), 4);
}

TEST(ThreadTuner, StartsFromTheGivenTeamAndGrowsToTheMaximumOnAnIdleMachine) {
  Machine m;
  m.step_ms = {{1, 2.0}, {2, 1.0}};
  ThreadTuner tuner(2, 1, m.WaitClock());
  EXPECT_EQ(tuner.threads(), 1);
  m.Run(tuner, 2000);
  EXPECT_EQ(tuner.threads(), 2);
  EXPECT_EQ(tuner.switches(), 1);
}

TEST(ThreadTuner, KeepsAStartingTeamThatTheLoadStillJustifies) {
  Machine m;
  m.step_ms = {{1, 2.0}, {2, 6.0}};
  m.shared = true;
  ThreadTuner tuner(2, 1, m.WaitClock());
  const auto used = m.Run(tuner, 5000);
  EXPECT_EQ(tuner.threads(), 1);
  EXPECT_EQ(used.count(2), 0u);  // a contended machine never probes upwards
}

TEST(InitialTeamSize, LeavesTheCpusThatOtherProcessesUse) {
  EXPECT_EQ(InitialTeamSize(2, 2, 0), 2);
  EXPECT_EQ(InitialTeamSize(2, 2, 1), 1);
  EXPECT_EQ(InitialTeamSize(2, 2, 5), 1);    // never below one
  EXPECT_EQ(InitialTeamSize(8, 64, 30), 8);  // a big node: the quota is the limit
  EXPECT_EQ(InitialTeamSize(8, 8, 3), 5);
  EXPECT_EQ(InitialTeamSize(4, 4, -1), 4);  // unknown: the maximum
}

TEST(ThreadTuner, LeavesASingleThreadAlone) {
  Machine m;
  m.step_ms = {{1, 1.0}};
  m.shared = true;
  ThreadTuner tuner(1, m.WaitClock());
  EXPECT_EQ(m.Run(tuner, 1000).at(1), 1000);
}

}  // namespace
}  // namespace edl::roles
