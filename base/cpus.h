// How many CPUs this process may use: the CPUs in its affinity mask, capped
// by its cgroup's CPU quota (cgroup v2 cpu.max, else v1 cpu.cfs_quota_us /
// cpu.cfs_period_us), rounded up. In a Kubernetes pod with a CPU limit this
// is the limit; on a plain machine, its cores. The default of --num_threads.
#pragma once

#include <optional>
#include <string>

namespace edl {

int UsableCpus();
// This process's cgroup CPU quota in CPUs (v2 cpu.max, else v1 cpu.cfs_quota_us /
// cpu.cfs_period_us); nullopt when there is none.
std::optional<double> CgroupCpuQuota();

// The pieces, for tests: the quota in CPUs (nullopt: no limit) from the
// text of a cgroup v2 cpu.max file ("max 100000", "150000 100000"), or
// from v1 quota and period files' text ("-1" means no limit).
std::optional<double> CpuQuotaFromCpuMax(const std::string& cpu_max);
std::optional<double> CpuQuotaFromCfs(const std::string& quota_us, const std::string& period_us);
// min(affinity_cpus, ceil(quota)), at least 1.
int CpusAllowed(int affinity_cpus, std::optional<double> quota);

}  // namespace edl
