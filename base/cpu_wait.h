// How long this process's threads have waited for a CPU: the run-queue
// delay of every thread (/proc/self/task/*/schedstat, second field) plus
// the time its cgroup was throttled by a CPU quota (cgroup v2 cpu.stat
// throttled_usec, else v1 cpu.stat throttled_time). Cumulative seconds,
// growing only while cores are shared; 0 where the kernel does not report
// them. Thread-safe (reads files only).
#pragma once

#include <string>

namespace edl {

double CpuWaitSeconds();

// The pieces, for tests: the run-queue delay in seconds from the text of a
// schedstat file ("<on cpu ns> <waiting ns> <slices>"), and the throttled
// seconds from a cgroup cpu.stat file's text (v2 throttled_usec or v1
// throttled_time in ns); 0 when absent or malformed.
double RunQueueWaitFromSchedstat(const std::string& schedstat);
double ThrottledFromCpuStat(const std::string& cpu_stat);

}  // namespace edl
