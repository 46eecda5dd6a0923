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

std::optional<double> CgroupCpuQuota() {
  // This process's own cgroup (from /proc/self/cgroup: "0::/path" for v2,
  // "N:cpu,cpuacct:/path" for v1), then the mount's root (a container's
  // cgroup namespace shows its own cgroup there).
  std::string v2 = "/", v1 = "/";
  std::istringstream lines(ReadSmallFile("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    const std::string path = line.substr(b + 1);
    if (controllers == ",,") v2 = path;
    if (controllers.find(",cpu,") != std::string::npos) v1 = path;
  }
  for (const std::string& dir : {v2, std::string("/")}) {
    if (auto q = CpuQuotaFromCpuMax(ReadSmallFile("/sys/fs/cgroup" + dir + "/cpu.max"))) return q;
  }
  for (const std::string& dir : {v1, std::string("/")}) {
    for (const char* mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
      if (auto q = CpuQuotaFromCfs(ReadSmallFile(mount + dir + "/cpu.cfs_quota_us"),
                                   ReadSmallFile(mount + dir + "/cpu.cfs_period_us"))) {
        return q;
      }
    }
  }
  return std::nullopt;
}

int UsableCpus() { return CpusAllowed(AffinityCpus(), CgroupCpuQuota()); }

}  // namespace edl
