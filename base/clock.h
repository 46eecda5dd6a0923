// Clock: where edl code gets the time, so tests can substitute FakeClock.
// RealClock is thread-safe; FakeClock is advanced explicitly by a test and is
// thread-safe too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace edl {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time in nanoseconds since an arbitrary origin.
  virtual int64_t NowNanos() const = 0;
  double NowSeconds() const { return static_cast<double>(NowNanos()) * 1e-9; }
};

class RealClock final : public Clock {
 public:
  int64_t NowNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// The process-wide real clock (stateless, so sharing it is harmless).
Clock& SystemClock();

class FakeClock final : public Clock {
 public:
  int64_t NowNanos() const override { return now_.load(); }
  void AdvanceSeconds(double s) { now_ += static_cast<int64_t>(s * 1e9); }

 private:
  std::atomic<int64_t> now_{0};
};

}  // namespace edl
