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

// How many threads of other processes are running or ready to run on this
// machine right now: /proc/stat's procs_running less this process's own
// running threads (state R in /proc/self/task/*/stat), the least of
// `samples` readings 1 ms apart (a busy neighbour is running at every one,
// a passing one is not). -1 where the kernel does not report it. It counts
// the whole machine, as /proc/stat does in a container.
int OthersRunnable(int samples = 5);

// The pieces, for tests: the run-queue delay in seconds from the text of a
// schedstat file ("<on cpu ns> <waiting ns> <slices>"), and the throttled
// seconds from a cgroup cpu.stat file's text (v2 throttled_usec or v1
// throttled_time in ns); 0 when absent or malformed.
double RunQueueWaitFromSchedstat(const std::string& schedstat);
double ThrottledFromCpuStat(const std::string& cpu_stat);
// procs_running from the text of /proc/stat; -1 when absent or malformed.
int ProcsRunningFromStat(const std::string& stat);
// Whether the text of a /proc/<pid>/task/<tid>/stat file says the thread
// is running ("<tid> (<name>) R ..."; the name may hold spaces and ')').
bool ThreadRunningFromStat(const std::string& stat);

}  // namespace edl
