#include "base/cpu_wait.h"

#include <dirent.h>

#include <sstream>

#include "base/file.h"

namespace edl {
namespace {

std::string ReadSmallFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

}  // namespace

double RunQueueWaitFromSchedstat(const std::string& schedstat) {
  std::istringstream in(schedstat);
  unsigned long long on_cpu = 0, waiting = 0;
  if (!(in >> on_cpu >> waiting)) return 0;
  return static_cast<double>(waiting) * 1e-9;
}

double ThrottledFromCpuStat(const std::string& cpu_stat) {
  std::istringstream in(cpu_stat);
  std::string key;
  unsigned long long value = 0;
  while (in >> key >> value) {
    if (key == "throttled_usec") return static_cast<double>(value) * 1e-6;
    if (key == "throttled_time") return static_cast<double>(value) * 1e-9;
  }
  return 0;
}

double CpuWaitSeconds() {
  double wait = 0;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      wait += RunQueueWaitFromSchedstat(
          ReadSmallFile(std::string("/proc/self/task/") + e->d_name + "/schedstat"));
    }
    ::closedir(dir);
  }
  std::string stat = ReadSmallFile("/sys/fs/cgroup/cpu.stat");
  if (stat.empty()) stat = ReadSmallFile("/sys/fs/cgroup/cpu/cpu.stat");
  return wait + ThrottledFromCpuStat(stat);
}

}  // namespace edl
