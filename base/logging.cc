#include "base/logging.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
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
std::mutex g_stderr_mu;
std::string g_status;  // guarded by g_stderr_mu

void WriteAll(const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

constexpr char kEraseLine[] = "\r\033[K";
}  // namespace

void WriteStderrLines(const std::string& lines) {
  std::lock_guard<std::mutex> lock(g_stderr_mu);
  if (g_status.empty()) {
    WriteAll(lines);
  } else {
    WriteAll(kEraseLine + lines + g_status);
  }
}

void SetStderrStatusLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_stderr_mu);
  if (line.empty() && g_status.empty()) return;
  g_status = line;
  WriteAll(kEraseLine + line);
}

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }

bool ParseLogLevel(const std::string& name, LogLevel* level) {
  std::string up = name;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  for (LogLevel l : {LogLevel::DEBUG, LogLevel::INFO, LogLevel::WARNING, LogLevel::ERROR}) {
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
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string line = std::string(ts) + "." + (ms < 100 ? (ms < 10 ? "00" : "0") : "") +
                     std::to_string(ms) + "Z " + LevelName(level_) + " " + stream_.str() + "\n";
  std::fflush(stderr);
  WriteStderrLines(line);
}
}  // namespace internal
}  // namespace edl
