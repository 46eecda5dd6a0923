#include "net/status_mapping.h"

namespace edl::net {

int HttpStatusForCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kFailedPrecondition: return 412;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted: return 409;
    case StatusCode::kResourceExhausted: return 429;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

StatusCode CodeForHttpStatus(int http_status) {
  switch (http_status) {
    case 400:
    case 413:
    case 431: return StatusCode::kInvalidArgument;
    case 401: return StatusCode::kUnauthenticated;
    case 403: return StatusCode::kPermissionDenied;
    case 404: return StatusCode::kNotFound;
    case 405: return StatusCode::kUnimplemented;
    case 409: return StatusCode::kAborted;
    case 412: return StatusCode::kFailedPrecondition;
    case 429: return StatusCode::kResourceExhausted;
    case 503: return StatusCode::kUnavailable;
    case 504: return StatusCode::kDeadlineExceeded;
    default:
      return http_status >= 200 && http_status < 300 ? StatusCode::kOk : StatusCode::kInternal;
  }
}

std::optional<StatusCode> ParseStatusCodeName(std::string_view name) {
  static constexpr StatusCode kAll[] = {
      StatusCode::kOk,
      StatusCode::kInvalidArgument,
      StatusCode::kNotFound,
      StatusCode::kAlreadyExists,
      StatusCode::kIoError,
      StatusCode::kUnimplemented,
      StatusCode::kDeadlineExceeded,
      StatusCode::kUnavailable,
      StatusCode::kInternal,
      StatusCode::kUnauthenticated,
      StatusCode::kFailedPrecondition,
      StatusCode::kPermissionDenied,
      StatusCode::kResourceExhausted,
      StatusCode::kAborted,
  };
  for (StatusCode code : kAll) {
    if (name == StatusCodeName(code)) return code;
  }
  return std::nullopt;
}

}  // namespace edl::net
