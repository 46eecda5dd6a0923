// TokenBucket: the client-side rate limit (client-go's qps/burst): up to
// `burst` requests at once, then `qps` per second on average. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>

namespace edl::kube {

class TokenBucket {
 public:
  // qps <= 0: no limit.
  TokenBucket(double qps, int burst);
  // Takes one token, sleeping until it is available. Callers are served in
  // the order they call (each reserves its slot before sleeping).
  void Acquire();
  // How long Acquire() would wait now, without taking a token.
  std::chrono::nanoseconds Delay();

 private:
  const double qps_;
  const double burst_;
  std::mutex mu_;  // guards the two below
  double tokens_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace edl::kube
