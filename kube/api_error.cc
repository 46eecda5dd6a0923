// ApiError: decoding a Kubernetes Status body (apimachinery
// pkg/api/errors) and mapping it onto edl's Status codes and messages.
#include <nlohmann/json.hpp>

#include "kube/client.h"

namespace edl::kube {
namespace {

// apimachinery's reasonForCode, for bodies that carry no reason.
std::string ReasonForCode(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return code >= 500 ? "InternalError" : "Unknown";
  }
}

std::string Shorten(std::string_view text) {
  constexpr size_t kMax = 256;
  size_t b = 0, e = text.size();
  while (b < e && isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string s(text.substr(b, e - b));
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

StatusCode CodeFor(const ApiError& e) {
  switch (e.http_code) {
    case 400:
    case 422: return StatusCode::kInvalidArgument;
    case 401: return StatusCode::kUnauthenticated;
    case 403: return StatusCode::kPermissionDenied;
    case 404: return StatusCode::kNotFound;
    case 409:
      return e.reason == "AlreadyExists" ? StatusCode::kAlreadyExists : StatusCode::kAborted;
    case 410: return StatusCode::kFailedPrecondition;
    case 429: return StatusCode::kResourceExhausted;
    case 504: return StatusCode::kDeadlineExceeded;
    default: break;
  }
  if (e.http_code >= 500) return StatusCode::kUnavailable;
  if (e.http_code >= 400) return StatusCode::kInvalidArgument;
  return StatusCode::kInternal;  // 1xx/3xx or a Status without a code
}

}  // namespace

ApiError DecodeApiError(int http_code, std::string_view body) {
  ApiError e;
  e.http_code = http_code;
  Json j = Json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_object()) {
    if (auto it = j.find("code"); http_code == 0 && it != j.end() && it->is_number_integer()) {
      e.http_code = it->get<int>();
    }
    if (auto it = j.find("reason"); it != j.end() && it->is_string()) {
      e.reason = it->get<std::string>();
    }
    if (auto it = j.find("message"); it != j.end() && it->is_string()) {
      e.message = it->get<std::string>();
    }
    if (auto it = j.find("details"); it != j.end() && it->is_object()) {
      e.details = *it;
    }
  } else if (!Shorten(body).empty()) {
    e.message = Shorten(body);
  }
  if (e.reason.empty()) e.reason = ReasonForCode(e.http_code);
  if (e.message.empty()) {
    e.message = "the server responded with the status code " + std::to_string(e.http_code) +
                " but did not return more information";
  }
  return e;
}

Status ToStatus(const std::string& method, const std::string& path, const ApiError& e) {
  return Status(CodeFor(e), "kube: " + method + " " + path + ": " + std::to_string(e.http_code) +
                                " " + e.reason + ": " + e.message);
}

std::string KubeReason(const Status& s) {
  // "... kube: METHOD PATH: NNN Reason: message"
  const std::string& m = s.message();
  if (s.ok()) return "";
  size_t at = m.find("kube: ");
  if (at == std::string::npos) return "";
  size_t method_end = m.find(' ', at + 6);
  if (method_end == std::string::npos) return "";
  size_t path_end = m.find(": ", method_end + 1);
  if (path_end == std::string::npos) return "";
  size_t code = path_end + 2;
  if (m.size() < code + 5 || m[code + 3] != ' ') return "";
  for (size_t i = code; i < code + 3; ++i) {
    if (!isdigit(static_cast<unsigned char>(m[i]))) return "";
  }
  size_t reason = code + 4;
  size_t reason_end = m.find(": ", reason);
  if (reason_end == std::string::npos || reason_end == reason) return "";
  std::string r = m.substr(reason, reason_end - reason);
  if (r.find(' ') != std::string::npos) return "";
  return r;
}

}  // namespace edl::kube
