// Logging: EDL_LOG(INFO) << "..."; writes one line to stderr with a UTC
// timestamp and level. The level threshold is set once by cmd/ from
// --log_level. Thread-safe (each line is written with one call).
#pragma once

#include <sstream>
#include <string>

#include "base/check.h"

namespace edl {

enum class LogLevel { DEBUG = 0, INFO = 1, WARNING = 2, ERROR = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Parses "DEBUG", "INFO", "WARNING", "ERROR" (any case); false if unknown.
bool ParseLogLevel(const std::string& name, LogLevel* level);

// Writes whole lines (each ending in '\n') to stderr in one call. While a
// status line is set (a progress bar on a terminal), it is erased first and
// redrawn after, so log lines scroll above the bar instead of breaking it.
void WriteStderrLines(const std::string& lines);
// Sets the status line (no '\n'; "" removes it) and redraws it. Only for a
// terminal: it uses '\r' and the erase-line escape.
void SetStderrStatusLine(const std::string& line);

namespace internal {
class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  ~LogLine();
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
}  // namespace internal
}  // namespace edl

// An expression (not an if/else), so it is safe in an unbraced if.
#define EDL_LOG(level)                            \
  (::edl::LogLevel::level < ::edl::GetLogLevel()) \
      ? (void)0                                   \
      : ::edl::internal::Voidify() & ::edl::internal::LogLine(::edl::LogLevel::level).stream()
