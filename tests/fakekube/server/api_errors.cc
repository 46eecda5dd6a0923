// Status objects with apimachinery's exact wording.
#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {

Json ApiError::ToStatus() const {
  Json status = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
                 {"status", "Failure"}, {"message", message}, {"reason", reason}};
  if (!details.empty()) status["details"] = details;
  status["code"] = code;
  return status;
}

namespace {

ApiError Make(int code, std::string reason, std::string message, Json details = Json::object()) {
  ApiError e;
  e.code = code;
  e.reason = std::move(reason);
  e.message = std::move(message);
  e.details = std::move(details);
  return e;
}

std::string Quote(const std::string& s) { return Json(s).dump(); }

Json NameKind(const std::string& resource, const std::string& name) {
  Json details = Json::object();
  if (!name.empty()) details["name"] = name;
  details["kind"] = resource;
  return details;
}

// The words apimachinery's field.ErrorType.String() gives each type.
std::string TypeWords(const std::string& type) {
  if (type == "FieldValueRequired") return "Required value";
  if (type == "FieldValueInvalid") return "Invalid value";
  if (type == "FieldValueForbidden") return "Forbidden";
  if (type == "FieldValueNotSupported") return "Unsupported value";
  if (type == "FieldValueDuplicate") return "Duplicate value";
  if (type == "FieldValueNotFound") return "Not found";
  return "Internal error";
}

// field.Error.ErrorBody(): the message without the field path; an empty
// value is field.OmitValueType{}.
std::string ErrorBody(const FieldError& e) {
  std::string body = TypeWords(e.type);
  if ((e.type == "FieldValueInvalid" || e.type == "FieldValueNotSupported" ||
       e.type == "FieldValueDuplicate" || e.type == "FieldValueNotFound") &&
      !e.value.empty()) {
    body += ": " + e.value;
  }
  if (!e.detail.empty()) body += ": " + e.detail;
  return body;
}

}  // namespace

ApiError BadRequest(const std::string& message) { return Make(400, "BadRequest", message); }

ApiError NotFoundError(const std::string& resource, const std::string& name) {
  return Make(404, "NotFound", resource + " " + Quote(name) + " not found",
              NameKind(resource, name));
}

ApiError PathNotFound() {
  return Make(404, "NotFound", "the server could not find the requested resource", Json::object());
}

ApiError AlreadyExistsError(const std::string& resource, const std::string& name) {
  return Make(409, "AlreadyExists", resource + " " + Quote(name) + " already exists",
              NameKind(resource, name));
}

ApiError ConflictError(const std::string& resource, const std::string& name,
                       const std::string& detail) {
  return Make(409, "Conflict",
              "Operation cannot be fulfilled on " + resource + " " + Quote(name) + ": " + detail,
              NameKind(resource, name));
}

ApiError ModifiedConflict(const std::string& resource, const std::string& name) {
  return ConflictError(resource, name,
                       "the object has been modified; please apply your changes to "
                       "the latest version and try again");
}

FieldError RequiredField(const std::string& field, const std::string& detail) {
  return FieldError{"FieldValueRequired", field, detail, ""};
}

FieldError InvalidField(const std::string& field, const std::string& value_json,
                        const std::string& detail) {
  return FieldError{"FieldValueInvalid", field, detail, value_json};
}

FieldError ForbiddenField(const std::string& field, const std::string& detail) {
  return FieldError{"FieldValueForbidden", field, detail, ""};
}

ApiError InvalidError(const std::string& kind, const std::string& name,
                      const std::vector<FieldError>& errors, const std::string& group) {
  Json causes = Json::array();
  std::string joined;
  for (size_t i = 0; i < errors.size(); ++i) {
    const FieldError& e = errors[i];
    std::string body = ErrorBody(e);
    causes.push_back({{"reason", e.type}, {"message", body}, {"field", e.field}});
    if (i > 0) joined += ", ";
    joined += e.field + ": " + body;
  }
  if (errors.size() > 1) joined = "[" + joined + "]";
  Json details = {{"name", name}};
  if (!group.empty()) details["group"] = group;
  details["kind"] = kind;
  details["causes"] = causes;
  const std::string qualified = group.empty() ? kind : kind + "." + group;
  return Make(422, "Invalid", qualified + " " + Quote(name) + " is invalid: " + joined, details);
}

ApiError ForbiddenError(const std::string& resource, const std::string& name,
                        const std::string& reason) {
  std::string subject = name.empty() ? resource : resource + " " + Quote(name);
  return Make(403, "Forbidden", subject + " is forbidden: " + reason, NameKind(resource, name));
}

ApiError UnauthorizedError() { return Make(401, "Unauthorized", "Unauthorized"); }

ApiError MethodNotAllowedError() {
  return Make(405, "MethodNotAllowed",
              "the server does not allow this method on the requested resource", Json::object());
}

ApiError ExpiredError(const std::string& message) { return Make(410, "Expired", message); }

ApiError UnsupportedPatchTypeError(const std::string& content_type) {
  return Make(415, "UnsupportedMediaType",
              "the body of the request was in an unknown format - accepted media "
              "types include: application/json-patch+json, "
              "application/merge-patch+json, application/apply-patch+yaml, "
              "application/strategic-merge-patch+json");
}

ApiError TooLargeResourceVersionError(uint64_t requested, uint64_t current) {
  Json details = {{"causes", Json::array({{{"reason", "ResourceVersionTooLarge"},
                                           {"message", "Too large resource version"}}})},
                  {"retryAfterSeconds", 1}};
  return Make(504, "Timeout",
              "Too large resource version: " + std::to_string(requested) +
                  ", current: " + std::to_string(current),
              details);
}

ApiError ServiceUnavailableError(const std::string& message) {
  return Make(503, "ServiceUnavailable", message);
}

ApiError InternalApiError(const std::string& message) {
  return Make(500, "InternalError", "Internal error occurred: " + message,
              Json{{"causes", Json::array({{{"message", message}}})}});
}

}  // namespace edl::fakekube
