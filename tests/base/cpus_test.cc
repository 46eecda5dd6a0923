#include "base/cpus.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <optional>

#include "base/cpu_wait.h"

namespace edl {
namespace {

TEST(Cpus, ReadsACgroupV2QuotaAndTreatsMaxAsNoLimit) {
  EXPECT_EQ(CpuQuotaFromCpuMax("max 100000\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(*CpuQuotaFromCpuMax("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(*CpuQuotaFromCpuMax("400000 100000"), 4.0);
  EXPECT_EQ(CpuQuotaFromCpuMax(""), std::nullopt);  // no such file
  EXPECT_EQ(CpuQuotaFromCpuMax("garbage"), std::nullopt);
}

TEST(Cpus, ReadsACgroupV1QuotaAndTreatsMinusOneAsNoLimit) {
  EXPECT_EQ(CpuQuotaFromCfs("-1\n", "100000\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(*CpuQuotaFromCfs("50000\n", "100000\n"), 0.5);
  EXPECT_EQ(CpuQuotaFromCfs("", ""), std::nullopt);
}

TEST(Cpus, AllowsTheAffinityMaskCappedByTheQuotaRoundedUpAndAtLeastOne) {
  EXPECT_EQ(CpusAllowed(16, std::nullopt), 16);
  EXPECT_EQ(CpusAllowed(16, 4.0), 4);
  EXPECT_EQ(CpusAllowed(16, 1.5), 2);
  EXPECT_EQ(CpusAllowed(16, 0.1), 1);
  EXPECT_EQ(CpusAllowed(2, 8.0), 2);
  EXPECT_EQ(CpusAllowed(0, std::nullopt), 1);
}

// UsableCpus() in a child process whose affinity mask is `cpus` CPUs of
// this process's mask (the lowest), as the child's exit code; -1 when the
// mask could not be set.
int UsableCpusWithAffinity(int cpus) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (::sched_getaffinity(0, sizeof mine, &mine) != 0) return -1;
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0, taken = 0; cpu < CPU_SETSIZE && taken < cpus; ++cpu) {
      if (CPU_ISSET(cpu, &mine)) {
        CPU_SET(cpu, &set);
        ++taken;
      }
    }
    if (::sched_setaffinity(0, sizeof set, &set) != 0) ::_exit(255);
    ::_exit(UsableCpus());
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 255 ? -1 : WEXITSTATUS(status);
}

TEST(Cpus, CountsTheCpusOfTheAffinityMaskCappedByTheQuota) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  const int mask = CPU_COUNT(&mine);
  const std::optional<double> quota = CgroupCpuQuota();
  EXPECT_EQ(UsableCpus(), CpusAllowed(mask, quota));
  // Pinned to one CPU, a process may use one, whatever the machine has.
  EXPECT_EQ(UsableCpusWithAffinity(1), 1);
  // Pinned to two, two, unless a quota of at most one CPU caps it.
  if (mask >= 2) {
    EXPECT_EQ(UsableCpusWithAffinity(2), quota && *quota <= 1 ? 1 : 2);
  }
}

}  // namespace
}  // namespace edl

namespace edl {
namespace {

TEST(CpuWait, ReadsTheRunQueueDelayOfASchedstatLine) {
  EXPECT_DOUBLE_EQ(RunQueueWaitFromSchedstat("123456789 2500000000 17\n"), 2.5);
  EXPECT_EQ(RunQueueWaitFromSchedstat(""), 0);
  EXPECT_EQ(RunQueueWaitFromSchedstat("garbage"), 0);
}

TEST(CpuWait, ReadsTheThrottledTimeOfCgroupV1AndV2) {
  EXPECT_DOUBLE_EQ(ThrottledFromCpuStat("nr_periods 21\nnr_throttled 19\nthrottled_time "
                                        "525574203\n"),
                   0.525574203);
  EXPECT_DOUBLE_EQ(ThrottledFromCpuStat("usage_usec 10\nuser_usec 5\nsystem_usec 5\n"
                                        "nr_periods 3\nnr_throttled 1\nthrottled_usec 1500000\n"),
                   1.5);
  EXPECT_EQ(ThrottledFromCpuStat("usage_usec 10\n"), 0);
}

TEST(CpuWait, ReadsProcsRunningFromProcStat) {
  EXPECT_EQ(ProcsRunningFromStat("cpu  1 2 3\nctxt 99\nprocs_running 3\nprocs_blocked 0\n"), 3);
  EXPECT_EQ(ProcsRunningFromStat("cpu  1 2 3\nprocs_blocked 0\n"), -1);
  EXPECT_EQ(ProcsRunningFromStat("cpu 1\nprocs_running x\n"), -1);
  EXPECT_EQ(ProcsRunningFromStat(""), -1);
}

TEST(CpuWait, ReadsWhetherAThreadRunsEvenWhenItsNameHoldsParentheses) {
  EXPECT_TRUE(ThreadRunningFromStat("4242 (edl) R 1 4242 4242 0 -1"));
  EXPECT_FALSE(ThreadRunningFromStat("4242 (edl) S 1 4242 4242 0 -1"));
  EXPECT_FALSE(ThreadRunningFromStat("4243 (a) R (b) S 1 2 3"));
  EXPECT_TRUE(ThreadRunningFromStat("4243 (a) S (b) R 1 2 3"));
  EXPECT_FALSE(ThreadRunningFromStat(""));
  EXPECT_FALSE(ThreadRunningFromStat("4242 (edl)"));
}

// Two child processes that spin are running at every reading.
TEST(CpuWait, CountsBusyProcessesBesideThisOne) {
  pid_t children[2];
  for (pid_t& child : children) {
    child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::atomic<unsigned long> spins{0};
      for (;;) spins.fetch_add(1, std::memory_order_relaxed);
    }
  }
  EXPECT_GE(OthersRunnable(), 2);
  for (pid_t child : children) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
}

}  // namespace
}  // namespace edl
