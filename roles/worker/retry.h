// RetryWhileUnavailable: how a worker calls the master or a PS that may be
// restarting: again after a backoff (50 ms doubling to 2 s) while the call
// fails with Unavailable, until it succeeds, fails otherwise, the timeout
// passes or the worker is stopping; returns the last result. Works for
// calls returning Status or Result<T>.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include "base/clock.h"
#include "base/logging.h"
#include "base/status.h"

namespace edl::roles::worker {

namespace retry_internal {
inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}
}  // namespace retry_internal

// `stopping()` says whether to give up at once; `pause(d)` waits up to d
// (returning early on a stop). `who` and `what` name the caller and the
// call in the warning logged before each retry.
template <typename F, typename Stopping, typename Pause>
auto RetryWhileUnavailable(const Clock& clock, std::chrono::milliseconds timeout,
                           const std::string& who, const char* what, Stopping stopping, Pause pause,
                           F f) -> decltype(f()) {
  const double deadline = clock.NowSeconds() + timeout.count() / 1000.0;
  auto backoff = std::chrono::milliseconds(50);
  while (true) {
    auto r = f();
    const Status& s = retry_internal::StatusOf(r);
    if (s.ok() || s.code() != StatusCode::kUnavailable || clock.NowSeconds() >= deadline ||
        stopping()) {
      return r;
    }
    EDL_LOG(WARNING) << who << ": cannot " << what << " (" << s.message() << "); retrying";
    pause(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

}  // namespace edl::roles::worker
