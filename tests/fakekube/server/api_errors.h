// The Kubernetes errors the fake reports, with the exact reasons, codes and
// messages of apimachinery's pkg/api/errors/errors.go, so
// that kubectl and client libraries print and classify them as they would
// the real server's. ApiError itself is declared in store.h.
#pragma once

#include <string>
#include <vector>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

// 400 BadRequest with `message`.
ApiError BadRequest(const std::string& message);
// 404 `pods "x" not found`; details {name, kind: resource}.
ApiError NotFoundError(const std::string& resource, const std::string& name);
// 404 for a path the server does not serve.
ApiError PathNotFound();
// 409 `pods "x" already exists`.
ApiError AlreadyExistsError(const std::string& resource, const std::string& name);
// 409 `Operation cannot be fulfilled on pods "x": <detail>`.
ApiError ConflictError(const std::string& resource, const std::string& name,
                       const std::string& detail);
// 409 Conflict with the "object has been modified" detail.
ApiError ModifiedConflict(const std::string& resource, const std::string& name);

// One field error of a 422 Invalid: `field: Required value` etc.
struct FieldError {
  std::string type;    // "FieldValueRequired", "FieldValueInvalid", ...
  std::string field;   // "spec.containers[0].image"
  std::string detail;  // the part after the type's own words, may be ""
  // For FieldValueInvalid, NotSupported, Duplicate and NotFound: the
  // offending value as Go prints it (JSON for strings and numbers); ""
  // leaves it out of the message.
  std::string value;
};
FieldError RequiredField(const std::string& field, const std::string& detail = "");
FieldError InvalidField(const std::string& field, const std::string& value_json,
                        const std::string& detail);
FieldError ForbiddenField(const std::string& field, const std::string& detail);
// 422 `Pod "x" is invalid: <errors>`, or `Job.batch "x" ...` for a kind
// of a named API group; details.kind is the Kind, details.group the group.
ApiError InvalidError(const std::string& kind, const std::string& name,
                      const std::vector<FieldError>& errors, const std::string& group = "");
// 403 `pods "x" is forbidden: <reason>` (name may be empty).
ApiError ForbiddenError(const std::string& resource, const std::string& name,
                        const std::string& reason);
// 401 Unauthorized.
ApiError UnauthorizedError();
// 405 MethodNotAllowed.
ApiError MethodNotAllowedError();
// 410 Expired `too old resource version: N (M)`.
ApiError ExpiredError(const std::string& message);
// 415 UnsupportedMediaType for a PATCH body type the server cannot apply.
ApiError UnsupportedPatchTypeError(const std::string& content_type);
// 504 Timeout `Too large resource version: N, current: M` with cause
// ResourceVersionTooLarge.
ApiError TooLargeResourceVersionError(uint64_t requested, uint64_t current);
// 503 ServiceUnavailable with `message`.
ApiError ServiceUnavailableError(const std::string& message);
// 500 InternalError `Internal error occurred: <message>`.
ApiError InternalApiError(const std::string& message);

}  // namespace edl::fakekube
