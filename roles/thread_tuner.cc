#include "roles/thread_tuner.h"

#include <unistd.h>

#include <algorithm>

#include "base/check.h"
#include "base/cpu_wait.h"
#include "base/logging.h"
#include "tensor/ops.h"

namespace edl::roles {
namespace {

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

ThreadTuner::ThreadTuner(int max_threads, int initial_threads,
                         std::function<double()> cpu_wait_seconds)
    : max_threads_(max_threads),
      cpu_wait_seconds_(std::move(cpu_wait_seconds)),
      threads_(initial_threads),
      kept_(initial_threads) {
  EDL_CHECK(max_threads >= 1) << max_threads;
  EDL_CHECK(initial_threads >= 1 && initial_threads <= max_threads) << initial_threads;
  StartWindow();
}

void ThreadTuner::StartWindow() {
  window_.clear();
  window_seconds_ = 0;
  wait_at_start_ = cpu_wait_seconds_();
}

int ThreadTuner::OnStep(double seconds) {
  if (max_threads_ == 1) return 1;
  window_.push_back(seconds);
  window_seconds_ += seconds;
  const int steps = static_cast<int>(window_.size());
  if ((steps >= kMinWindowSteps && window_seconds_ >= kMinWindowSeconds) ||
      steps >= kMaxWindowSteps) {
    CloseWindow();
    StartWindow();
  }
  return threads_;
}

void ThreadTuner::CloseWindow() {
  const double median = Median(window_);
  if (probing_) {
    probing_ = false;
    const bool grew = threads_ > kept_;
    if (median < kept_median_ * (1 - kBetter)) {
      kept_ = threads_;
      ++switches_;
      down_backoff_ = 1;
      up_backoff_ = kFirstUpProbe;
    } else {
      threads_ = kept_;
      if (grew) {
        up_backoff_ = std::min(2 * up_backoff_, kMaxBackoff);
      } else {
        down_backoff_ = std::min(2 * down_backoff_, kMaxBackoff);
      }
    }
    quiet_windows_ = 0;
    down_wait_ = 0;
    return;
  }
  kept_median_ = median;
  const double waited = cpu_wait_seconds_() - wait_at_start_;
  const bool contended = waited > kContended * window_seconds_ * threads_;
  if (contended && kept_ > 1) {
    quiet_windows_ = 0;
    if (++down_wait_ >= down_backoff_) {
      probing_ = true;
      threads_ = std::max(1, kept_ / 2);
    }
    return;
  }
  down_wait_ = 0;
  if (contended) {
    quiet_windows_ = 0;
    return;
  }
  if (kept_ < max_threads_ && ++quiet_windows_ >= up_backoff_) {
    probing_ = true;
    threads_ = std::min(max_threads_, kept_ * 2);
  }
}

int InitialTeamSize(int max_threads, int online_cpus, int others_running) {
  if (others_running < 0) return max_threads;
  return std::clamp(online_cpus - others_running, 1, max_threads);
}

AdaptiveThreads::AdaptiveThreads(bool enabled, const Clock& clock) : clock_(clock) {
  first_ = tensor::NumThreads();
  if (enabled && first_ > 1) {
    const int others = OthersRunnable();
    const int online = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    const int initial = InitialTeamSize(first_, online, others);
    if (initial < first_) {
      EDL_LOG(INFO) << others << " threads of other processes are running on the " << online
                    << " CPUs: starting with " << initial << " of " << first_
                    << " compute threads (--adapt_threads adjusts it as the load changes)";
      tensor::SetNumThreads(initial);
    }
    tuner_ = std::make_unique<ThreadTuner>(first_, initial, CpuWaitSeconds);
  }
  last_ = clock_.NowSeconds();
}

void AdaptiveThreads::Step() {
  if (!tuner_) return;
  const double now = clock_.NowSeconds();
  const int before = tuner_->threads();
  const int next = tuner_->OnStep(now - last_);
  if (next != before) {
    EDL_LOG(DEBUG) << "CPU team size " << before << " -> " << next << " (kept " << tuner_->kept()
                   << ", " << tuner_->switches() << " changes)";
    tensor::SetNumThreads(next);
  }
  // Timed from after the change, so that each step's time is its own.
  last_ = clock_.NowSeconds();
}

std::string AdaptiveThreads::Summary() const {
  if (!tuner_ || (tuner_->switches() == 0 && tuner_->threads() == first_)) return "";
  return "team size " + std::to_string(first_) + " -> " + std::to_string(tuner_->threads()) + " (" +
         std::to_string(tuner_->switches()) + " changes)";
}

}  // namespace edl::roles
