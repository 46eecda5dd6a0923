// ThreadTuner: the CPU tensor engine's team size for a loop of like steps
// (training), chosen from how the steps run. An OpenMP team finishes each
// op only when all of its threads have run, so on cores shared with busy
// processes, or under a cgroup quota that throttles the process, a thread
// the kernel has descheduled stalls the whole team, and one thread can be
// several times faster than two.
//
// The tuner closes a window every few steps (at least kMinWindowSteps and
// kMinWindowSeconds of step time). A window whose threads waited for a CPU
// (CpuWaitSeconds' growth over the window's wall time per thread above
// kContended) is followed by a probe window with half the threads; a probe
// that is faster (median step time at least kBetter lower) is kept. Below
// the maximum, a quiet window is followed now and then (with a doubling
// back-off while probes lose) by a probe with twice the threads, so the
// team grows back when the neighbours go. On an idle machine nothing ever
// waits, no probe runs and the team stays at the maximum: runs with one
// seed stay reproducible. Not thread-safe: one loop owns it.
//
// A short run cannot wait for windows to find the team: AdaptiveThreads
// starts it at the CPUs that other processes leave free when it begins
// (InitialTeamSize), and the windows correct that guess either way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"

namespace edl::roles {

class ThreadTuner {
 public:
  static constexpr int kMinWindowSteps = 8;
  static constexpr double kMinWindowSeconds = 0.05;
  static constexpr int kMaxWindowSteps = 256;
  static constexpr double kContended = 0.1;
  static constexpr double kBetter = 0.05;
  static constexpr int kFirstUpProbe = 4;  // quiet windows before growing
  static constexpr int kMaxBackoff = 256;  // windows

  // max_threads >= 1; cpu_wait_seconds: cumulative seconds this process
  // waited for a CPU (base/cpu_wait.h CpuWaitSeconds; a fake in tests).
  // initial_threads in [1, max_threads]: the team for the first window.
  ThreadTuner(int max_threads, std::function<double()> cpu_wait_seconds)
      : ThreadTuner(max_threads, max_threads, std::move(cpu_wait_seconds)) {}
  ThreadTuner(int max_threads, int initial_threads, std::function<double()> cpu_wait_seconds);

  // Records a step that took `seconds` of wall time; returns the team size
  // for the next step.
  int OnStep(double seconds);
  int threads() const { return threads_; }
  // The team size chosen (threads() unless a probe runs).
  int kept() const { return kept_; }
  // Team-size changes so far (for the log).
  int64_t switches() const { return switches_; }

 private:
  void CloseWindow();
  void StartWindow();

  const int max_threads_;
  std::function<double()> cpu_wait_seconds_;
  int threads_;  // for the current window
  int kept_;     // the chosen team size (threads_ unless probing)
  bool probing_ = false;
  double kept_median_ = 0;  // of the last window at kept_
  std::vector<double> window_;
  double window_seconds_ = 0;
  double wait_at_start_ = 0;
  int quiet_windows_ = 0;
  int down_backoff_ = 1, down_wait_ = 0;
  int up_backoff_ = kFirstUpProbe;
  int64_t switches_ = 0;
};

// The team to start with: the CPUs that `others_running` threads of other
// processes leave of `online_cpus`, within [1, max_threads]; max_threads
// when the count is unknown (others_running < 0).
int InitialTeamSize(int max_threads, int online_cpus, int others_running);

// Drives a ThreadTuner over a training loop on the CPU: Step() after each
// step times it with `clock` and gives the CPU backend the tuner's team
// size (tensor::SetNumThreads), up to the backend's current count, starting
// at InitialTeamSize for the machine's load (logged when that is smaller).
// Does nothing when disabled (--adapt_threads=false, or a GPU model).
class AdaptiveThreads {
 public:
  AdaptiveThreads(bool enabled, const Clock& clock);
  void Step();
  // "team size 2 -> 1 (3 changes)" once the team differs from the backend's
  // count (at the start or later), else "".
  std::string Summary() const;

 private:
  const Clock& clock_;
  std::unique_ptr<ThreadTuner> tuner_;
  int first_ = 0;
  double last_ = 0;
};

}  // namespace edl::roles
