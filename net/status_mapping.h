// How a Status crosses the wire (docs/rpc.md): each StatusCode
// maps to an HTTP status, and the code's name travels in the `Edl-Status`
// header so the client recovers the exact code. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "base/status.h"

namespace edl::net {

// The response header carrying StatusCodeName(code) on errors.
inline constexpr std::string_view kEdlStatusHeader = "Edl-Status";

// InvalidArgument 400, Unauthenticated 401, PermissionDenied 403,
// NotFound 404, AlreadyExists and Aborted 409, FailedPrecondition 412,
// ResourceExhausted 429, Unavailable 503, DeadlineExceeded 504, OK 200,
// everything else 500.
int HttpStatusForCode(StatusCode code);

// The inverse for responses without a (known) Edl-Status header, so that
// CodeForHttpStatus(HttpStatusForCode(c)) == c for every code with an HTTP
// status of its own: 400, 413 and 431 InvalidArgument, 401 Unauthenticated,
// 403 PermissionDenied, 404 NotFound, 405 Unimplemented, 409 Aborted (the
// more general of the two codes 409 stands for), 412 FailedPrecondition,
// 429 ResourceExhausted, 503 Unavailable, 504 DeadlineExceeded, other
// non-2xx Internal.
StatusCode CodeForHttpStatus(int http_status);

// "InvalidArgument" -> kInvalidArgument (exact StatusCodeName spelling);
// nullopt for anything else.
std::optional<StatusCode> ParseStatusCodeName(std::string_view name);

}  // namespace edl::net
