#include "kube/token_bucket.h"

#include <algorithm>
#include <thread>

namespace edl::kube {

TokenBucket::TokenBucket(double qps, int burst)
    : qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(burst_),
      last_(std::chrono::steady_clock::now()) {}

std::chrono::nanoseconds TokenBucket::Delay() {
  if (qps_ <= 0) return std::chrono::nanoseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  auto now = std::chrono::steady_clock::now();
  double tokens =
      std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
  if (tokens >= 1) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(static_cast<int64_t>((1 - tokens) / qps_ * 1e9));
}

void TokenBucket::Acquire() {
  if (qps_ <= 0) return;
  std::chrono::steady_clock::time_point wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = std::chrono::steady_clock::now();
    tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
    last_ = now;
    tokens_ -= 1;
    if (tokens_ >= 0) return;
    wake = now + std::chrono::nanoseconds(static_cast<int64_t>(-tokens_ / qps_ * 1e9));
  }
  std::this_thread::sleep_until(wake);
}

}  // namespace edl::kube
