#include "base/cpus.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace edl {
namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool ParseNumber(const std::string& text, double* out) {
  std::istringstream in(text);
  double v = 0;
  if (!(in >> v)) return false;
  *out = v;
  return true;
}

int AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

}  // namespace

std::optional<double> CpuQuotaFromCpuMax(const std::string& cpu_max) {
  std::istringstream in(cpu_max);
  std::string quota;
  double period = 0;
  if (!(in >> quota) || quota == "max") return std::nullopt;
  if (!(in >> period) || period <= 0) period = 100000;
  double q = 0;
  if (!ParseNumber(quota, &q) || q <= 0) return std::nullopt;
  return q / period;
}

std::optional<double> CpuQuotaFromCfs(const std::string& quota_us, const std::string& period_us) {
  double q = 0, p = 0;
  if (!ParseNumber(quota_us, &q) || q <= 0) return std::nullopt;
  if (!ParseNumber(period_us, &p) || p <= 0) return std::nullopt;
  return q / p;
}

int CpusAllowed(int affinity_cpus, std::optional<double> quota) {
  int n = std::max(affinity_cpus, 1);
  if (quota && *quota > 0) {
    n = std::min(n, static_cast<int>(std::ceil(*quota - 1e-9)));
  }
  return std::max(n, 1);
}

int UsableCpus() {
  std::optional<double> quota = CpuQuotaFromCpuMax(ReadSmallFile("/sys/fs/cgroup/cpu.max"));
  if (!quota) {
    quota = CpuQuotaFromCfs(ReadSmallFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                            ReadSmallFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
  }
  return CpusAllowed(AffinityCpus(), quota);
}

}  // namespace edl
