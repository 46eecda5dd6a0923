#include "tests/fakekube/server/api_faults.h"

#include <string>

#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {
namespace {

ApiResult<FaultPlan> Bad(const std::string& message) {
  return ApiResult<FaultPlan>::Err(BadRequest("fault plan: " + message));
}

}  // namespace

ApiResult<FaultPlan> ParseFaultPlan(const ParsedTarget& target) {
  FaultPlan plan;
  plan.code = static_cast<int>(QueryInt(target, "code").value_or(503));
  if (plan.code != 429 && plan.code != 500 && plan.code != 503) {
    return Bad("code must be 429, 500 or 503, got " + std::to_string(plan.code));
  }
  std::optional<int64_t> count = QueryInt(target, "count");
  std::optional<int64_t> ms = QueryInt(target, "ms");
  if (!count && !ms) return Bad("give count (requests) or ms (milliseconds)");
  if (count.value_or(0) < 0 || ms.value_or(0) < 0) {
    return Bad("count and ms must not be negative");
  }
  plan.count = count.value_or(0);
  plan.for_time = std::chrono::milliseconds(ms.value_or(0));
  plan.retry_after_s = static_cast<int>(QueryInt(target, "retry_after").value_or(1));
  if (plan.retry_after_s < 0) return Bad("retry_after must not be negative");
  return ApiResult<FaultPlan>::Ok(plan);
}

void ApiFaults::Set(const FaultPlan& plan) {
  std::lock_guard<std::mutex> lock(mu_);
  plan_ = plan;
  left_ = plan.count;
  until_ = std::chrono::steady_clock::now() + plan.for_time;
}

std::optional<ApiResponse> ApiFaults::Next() {
  std::lock_guard<std::mutex> lock(mu_);
  if (left_ > 0) {
    --left_;
  } else if (std::chrono::steady_clock::now() >= until_) {
    return std::nullopt;
  }
  ++injected_;
  ApiError error;
  error.code = plan_.code;
  switch (plan_.code) {
    case 429:
      error.reason = "TooManyRequests";
      error.message = "Too many requests, please try again later.";
      break;
    case 500:
      error.reason = "InternalError";
      error.message = "Internal error occurred: injected by the fake API server";
      break;
    default:
      error.reason = "ServiceUnavailable";
      error.message = "the server is currently unable to handle the request";
      break;
  }
  ApiResponse response = ErrorResponse(error);
  if (plan_.code == 429 || plan_.retry_after_s > 0) {
    response.headers.emplace_back("Retry-After", std::to_string(plan_.retry_after_s));
  }
  return response;
}

int64_t ApiFaults::injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

}  // namespace edl::fakekube
