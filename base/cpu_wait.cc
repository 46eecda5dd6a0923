#include "base/cpu_wait.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "base/file.h"

namespace edl {
namespace {

std::string ReadSmallFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

// The text of /proc/self/task/<tid>/<file> for every thread of this process.
std::vector<std::string> EveryThreads(const char* file) {
  std::vector<std::string> out;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      out.push_back(ReadSmallFile(std::string("/proc/self/task/") + e->d_name + "/" + file));
    }
    ::closedir(dir);
  }
  return out;
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

int ProcsRunningFromStat(const std::string& stat) {
  const std::string key = "\nprocs_running ";
  const size_t at = stat.find(key);
  if (at == std::string::npos) return -1;
  std::istringstream in(stat.substr(at + key.size()));
  int running = -1;
  if (!(in >> running) || running < 0) return -1;
  return running;
}

bool ThreadRunningFromStat(const std::string& stat) {
  const size_t name_end = stat.rfind(')');
  return name_end != std::string::npos && name_end + 2 < stat.size() && stat[name_end + 1] == ' ' &&
         stat[name_end + 2] == 'R';
}

int OthersRunnable(int samples) {
  int least = -1;
  for (int i = 0; i < samples; ++i) {
    if (i > 0) ::usleep(1000);
    const int running = ProcsRunningFromStat(ReadSmallFile("/proc/stat"));
    if (running < 0) return -1;
    int ours = 0;
    for (const std::string& stat : EveryThreads("stat")) ours += ThreadRunningFromStat(stat);
    const int others = std::max(0, running - std::max(ours, 1));
    least = least < 0 ? others : std::min(least, others);
  }
  return least;
}

double CpuWaitSeconds() {
  double wait = 0;
  for (const std::string& schedstat : EveryThreads("schedstat")) {
    wait += RunQueueWaitFromSchedstat(schedstat);
  }
  std::string stat = ReadSmallFile("/sys/fs/cgroup/cpu.stat");
  if (stat.empty()) stat = ReadSmallFile("/sys/fs/cgroup/cpu/cpu.stat");
  return wait + ThrottledFromCpuStat(stat);
}

}  // namespace edl
