#include "base/logging.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace edl {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::INFO)};
const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::DEBUG: return "DEBUG";
    case LogLevel::INFO: return "INFO";
    case LogLevel::WARNING: return "WARNING";
    case LogLevel::ERROR: return "ERROR";
  }
  return "?";
}
}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }

bool ParseLogLevel(const std::string& name, LogLevel* level) {
  std::string up = name;
  std::transform(up.begin(), up.end(), up.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  for (LogLevel l : {LogLevel::DEBUG, LogLevel::INFO, LogLevel::WARNING,
                     LogLevel::ERROR}) {
    if (up == LevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

namespace internal {
LogLine::~LogLine() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string line = std::string(ts) + "." + (ms < 100 ? (ms < 10 ? "00" : "0") : "") +
                     std::to_string(ms) + "Z " + LevelName(level_) + " " +
                     stream_.str() + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}
}  // namespace internal
}  // namespace edl
