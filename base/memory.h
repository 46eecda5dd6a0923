// The process's peak resident memory, for the log line every role writes
// when it ends (what a user checks when sizing pods, and what the data-at-
// scale tests assert).
#pragma once

#include <cstdint>
#include <string>

namespace edl {

// VmHWM from /proc/self/status in bytes (getrusage's ru_maxrss where /proc
// is absent); 0 if neither answers.
int64_t PeakRssBytes();

// "<who>: peak RSS 84.2 MiB".
std::string PeakRssLine(const std::string& who);

}  // namespace edl
