#include "base/memory.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <fstream>

namespace edl {

int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    long long kib = 0;
    if (std::sscanf(line.c_str(), "VmHWM: %lld kB", &kib) == 1) return kib * 1024;
  }
  struct rusage usage;
  std::memset(&usage, 0, sizeof usage);
  if (getrusage(RUSAGE_SELF, &usage) == 0) return static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return 0;
}

std::string PeakRssLine(const std::string& who) {
  char mib[32];
  std::snprintf(mib, sizeof mib, "%.1f", static_cast<double>(PeakRssBytes()) / (1 << 20));
  return who + ": peak RSS " + mib + " MiB";
}

}  // namespace edl
