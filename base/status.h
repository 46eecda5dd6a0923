// Status and Result<T>: how edl reports failures of the world (bad input, a
// missing file, a peer gone). Bugs use EDL_CHECK instead (base/check.h).
//
// A Status is either OK or carries a code and a one-line message that names
// the thing that is wrong (file, line, field or flag). Both types are values
// and are not thread-safe to mutate concurrently.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "base/check.h"

namespace edl {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: flags, model spec, data
  kNotFound,
  kAlreadyExists,
  kIoError,
  kUnimplemented,
  kDeadlineExceeded,
  kUnavailable,
  kInternal,
  kUnauthenticated,     // a request without the job's secret
  kFailedPrecondition,  // the system is not in a state to do this (yet)
  kPermissionDenied,    // authenticated, but not allowed (Kubernetes 403)
  kResourceExhausted,   // a quota or rate limit (Kubernetes 429)
  kAborted,             // a conflicting concurrent change (Kubernetes 409 Conflict)
};

// "InvalidArgument", ... (for logs and the wire).
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "message" for errors, "OK" for success.
  std::string ToString() const { return ok() ? "OK" : message_; }

  // Returns a copy whose message is "prefix: message" (for adding context
  // such as a file name as an error travels up).
  Status WithPrefix(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status IoError(std::string m) { return Status(StatusCode::kIoError, std::move(m)); }
inline Status Unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status DeadlineExceeded(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
inline Status Unauthenticated(std::string m) {
  return Status(StatusCode::kUnauthenticated, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status AlreadyExists(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
inline Status PermissionDenied(std::string m) {
  return Status(StatusCode::kPermissionDenied, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status Aborted(std::string m) { return Status(StatusCode::kAborted, std::move(m)); }

// Result<T> holds either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    EDL_CHECK(!status_.ok()) << "Result constructed from an OK status";
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    EDL_CHECK(ok()) << "value() of a failed Result: " << status_.message();
    return *value_;
  }
  const T& value() const& {
    EDL_CHECK(ok()) << "value() of a failed Result: " << status_.message();
    return *value_;
  }
  T&& value() && {
    EDL_CHECK(ok()) << "value() of a failed Result: " << status_.message();
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace edl

#define EDL_CONCAT_INNER_(a, b) a##b
#define EDL_CONCAT_(a, b) EDL_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if it is not OK.
#define EDL_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::edl::Status edl_status_ = (expr);        \
    if (!edl_status_.ok()) return edl_status_; \
  } while (0)

// EDL_ASSIGN_OR_RETURN(auto x, MakeX()); declares x from a Result or returns
// its error status.
#define EDL_ASSIGN_OR_RETURN(lhs, expr) \
  EDL_ASSIGN_OR_RETURN_IMPL_(EDL_CONCAT_(edl_result_, __LINE__), lhs, expr)
#define EDL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
