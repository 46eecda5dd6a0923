// Client: a Kubernetes REST client (HTTP/1.1 over Boost.Beast + OpenSSL) for
// the few generic resources edl uses: get, list (following `continue`),
// create, delete, patch, raw GETs and streams for subresources, and watch.
// Wire details follow the REST API as client-go and kubectl use it, avoiding
// the pitfalls other client libraries hit (below, and kube/watch.h).
//
// Thread-safe: requests share a small pool of keep-alive connections; every
// watch and every Stream() gets a connection of its own. A client-side token
// bucket (ClientOptions::qps/burst) paces every request; 429 answers, and
// 5xx answers with a Retry-After header, are re-sent after Retry-After (as
// client-go does; a 5xx without it, or a lost connection, is returned). Credentials are sent only
// over TLS (as kubectl does): a static token, a token file re-read every <= 60 s and after a 401
// (the request is then retried once), an exec plugin's credential cached until
// it expires or a 401, and a client certificate.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "kube/config.h"

namespace edl::kube {

using Json = nlohmann::json;

// Which collection a request addresses: core group ("") is /api/v1, others
// /apis/<group>/<version>.
struct Resource {
  std::string group;
  std::string version = "v1";
  std::string plural;
  bool namespaced = true;
};
Resource Pods();
Resource Services();
Resource ConfigMaps();
Resource Secrets();
Resource PriorityClasses();  // scheduling.k8s.io/v1, cluster-scoped
Resource Jobs();             // batch/v1

// The collection path, e.g. "/api/v1/namespaces/edl/pods" or, for a
// cluster-scoped resource or an empty ns, "/apis/scheduling.k8s.io/v1/...".
std::string CollectionPath(const Resource& r, const std::string& ns);

struct ListOptions {
  std::string label_selector, field_selector, resource_version;
  int64_t limit = 500;  // page size; 0 = no limit parameter
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy = "Background";
  std::string precondition_uid;  // 409 Conflict if the object's uid differs
};

enum class PatchType { kMerge, kStrategicMerge, kJson };

struct ClientOptions {
  double qps = 20;  // token-bucket client-side rate limit on every request;
  int burst = 40;   // qps <= 0 disables it
  std::chrono::milliseconds request_timeout{30000};
  // 429 (and 5xx with Retry-After) Retry-After honoured (capped at this),
  // the request re-sent up to 3 times.
  std::chrono::milliseconds max_retry_after{60000};
};

// A Kubernetes API error: HTTP code + reason + message from the Status body.
// Converted to edl Status codes: 400/422→InvalidArgument,
// 401→Unauthenticated, 403→PermissionDenied, 404→NotFound,
// 409 AlreadyExists→AlreadyExists, 409 Conflict→Aborted,
// 410→FailedPrecondition, 429→ResourceExhausted, 504→DeadlineExceeded,
// 5xx/connection→Unavailable. Message:
// `kube: POST /api/v1/namespaces/edl/pods: 409 AlreadyExists: pods "ps-0"
// already exists`.
struct ApiError {
  int http_code = 0;
  std::string reason, message;
  Json details;  // the Status's `details` object, or null
};

// Decodes a non-2xx response (Status JSON, or anything else): fields of the
// wrong type are ignored, a missing reason is derived from the code, a
// non-JSON body becomes the (shortened) message. When http_code is 0 (an
// in-band watch ERROR event) the Status's own `code` is used.
ApiError DecodeApiError(int http_code, std::string_view body);
Status ToStatus(const std::string& method, const std::string& path, const ApiError& e);
// The reason of a Status produced by Client ("AlreadyExists", "NotFound",
// ...), "" if none (e.g. a connection error or an OK status).
std::string KubeReason(const Status& s);

class WatchStream;  // kube/watch.h

class Client {
 public:
  // Validates the config (server URL, PEMs) and builds the TLS context;
  // connects lazily. InvalidArgument naming config.description when the
  // config cannot work.
  static Result<std::unique_ptr<Client>> Create(ClusterConfig config, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const std::string& default_namespace() const;

  Result<Json> Get(const Resource& r, const std::string& ns, const std::string& name);
  // Follows `continue`; returns the List object with the items of all pages
  // merged (metadata.continue removed).
  Result<Json> List(const Resource& r, const std::string& ns, const ListOptions& o = {});
  Result<Json> Create(const Resource& r, const std::string& ns, const Json& object);
  // The response body: the deleted object (pods) or a Status (others).
  Result<Json> Delete(const Resource& r, const std::string& ns, const std::string& name,
                      const DeleteOptions& o = {});
  Result<Json> Patch(const Resource& r, const std::string& ns, const std::string& name,
                     const Json& patch, PatchType type = PatchType::kMerge,
                     const std::string& subresource = "");
  // Raw request for subresources and proxies: GET .../pods/x/log,
  // /api/v1/namespaces/n/services/s:port/proxy/status. The body as is.
  Result<std::string> GetRaw(const std::string& path_and_query);
  // Raw POST, for a proxied service's API (.../services/s:port/proxy/PATH);
  // `headers` are sent too (the API server consumes Authorization, so a
  // proxied service's own credentials travel in a header of its own).
  Result<std::string> PostRaw(const std::string& path, const std::string& body,
                              const std::string& content_type,
                              const std::vector<std::pair<std::string, std::string>>& headers);
  // Streams a GET body (pods/x/log?follow=true) to `sink` chunk by chunk
  // until EOF or until sink returns false (then OK). Headers must arrive
  // within request_timeout; the body may be quiet for any time.
  Status Stream(const std::string& path_and_query,
                const std::function<bool(std::string_view)>& sink);
  // Opens a watch (`watch=1`, resourceVersion from o, `timeoutSeconds`,
  // `allowWatchBookmarks`) on a connection of its own. Returns once the
  // response headers arrived (within request_timeout); a non-2xx answer is
  // returned as its Status.
  Result<std::unique_ptr<WatchStream>> Watch(
      const Resource& r, const std::string& ns, const ListOptions& o,
      std::chrono::seconds timeout_seconds = std::chrono::seconds(300),
      bool allow_bookmarks = true);

  // Requests sent so far, retries included (for tests and metrics).
  int64_t requests_sent() const;

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edl::kube
