// ApiFaults: errors the fake API server answers on purpose, as a real one
// does under load or while it restarts: every request, for a number of
// requests or for a time, gets a 429 TooManyRequests (with Retry-After, as
// the priority-and-fairness filter sends it), a 500 InternalError or a 503
// ServiceUnavailable (Retry-After when asked) instead of its answer.
// Test hooks set them through POST /debug/fakekube/faults (api_server.h).
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include "tests/fakekube/server/api_handlers.h"
#include "tests/fakekube/server/request.h"

namespace edl::fakekube {

struct FaultPlan {
  int code = 503;                         // 429, 500 or 503
  int64_t count = 0;                      // the next `count` requests...
  std::chrono::milliseconds for_time{0};  // ...and/or every request for this long
  int retry_after_s = 1;                  // Retry-After on a 429 always, on others if > 0
};

// ?code=503&count=N&ms=T&retry_after=S (count or ms required, both >= 0);
// 400 naming the parameter that is wrong.
ApiResult<FaultPlan> ParseFaultPlan(const ParsedTarget& target);

class ApiFaults {
 public:
  // Replaces the plan in force (a plan of count 0 and time 0 ends it).
  void Set(const FaultPlan& plan);
  // The answer a request gets now instead of its own, if a fault is due.
  std::optional<ApiResponse> Next();
  // Requests answered with a fault so far.
  int64_t injected() const;

 private:
  mutable std::mutex mu_;  // guards everything below
  FaultPlan plan_;
  int64_t left_ = 0;
  std::chrono::steady_clock::time_point until_;
  int64_t injected_ = 0;
};

}  // namespace edl::fakekube
