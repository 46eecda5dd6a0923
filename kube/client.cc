// Client: requests over a small pool of keep-alive connections, with the
// rate limit, credential refresh on 401 and Retry-After on 429 applied to
// every request, watches and streams included.
#include "kube/client.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "base/logging.h"
#include "base/percent_encoding.h"
#include "kube/credential_source.h"
#include "kube/token_bucket.h"
#include "kube/watch.h"
#include "net/http_connection.h"

namespace edl::kube {
namespace {

using net::HttpConnection;
using net::HttpHead;
using net::SteadyClock;
using net::TimePoint;

constexpr size_t kMaxIdleConnections = 4;
constexpr size_t kMaxBodyBytes = size_t{512} << 20;  // a big LIST page
constexpr size_t kMaxErrorBodyBytes = size_t{1} << 20;
constexpr int kMaxThrottledRetries = 3;

void AddQuery(std::string* target, const std::string& key, const std::string& value) {
  if (value.empty()) return;
  *target += target->find('?') == std::string::npos ? '?' : '&';
  *target += key + "=" + PercentEncode(value);
}

std::string WithoutQuery(const std::string& target) { return target.substr(0, target.find('?')); }

std::string ObjectPath(const Resource& r, const std::string& ns, const std::string& name) {
  return CollectionPath(r, ns) + "/" + PercentEncode(name);
}

std::string SelectorQuery(const ListOptions& o) {
  std::string q;
  AddQuery(&q, "labelSelector", o.label_selector);
  AddQuery(&q, "fieldSelector", o.field_selector);
  return q;
}

std::chrono::milliseconds RetryAfter(const HttpHead& head, std::chrono::milliseconds max) {
  std::string v = head.Header("Retry-After");
  std::chrono::milliseconds wait(1000);
  if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos && v.size() < 9) {
    wait = std::chrono::seconds(std::stoi(v));
  }
  return std::min(wait, max);
}

}  // namespace

struct Client::Impl {
  Impl(ClusterConfig c, ClientOptions o, net::Endpoint e)
      : config(std::move(c)),
        options(o),
        endpoint(std::move(e)),
        credentials(config),
        bucket(o.qps, o.burst) {}

  // A connection with the request sent and the response head read, after
  // 401 refreshes and 429 waits. The body is still to be read.
  struct Opened {
    std::unique_ptr<HttpConnection> connection;
    HttpHead head;
  };
  using Headers = std::vector<std::pair<std::string, std::string>>;
  // `extra` headers are sent besides Accept, Authorization and Content-Type.
  Result<Opened> Open(const std::string& method, const std::string& target, const std::string& body,
                      const std::string& content_type, const std::string& accept, bool dedicated,
                      const Headers& extra = {});
  Result<Opened> OpenOnce(const std::string& method, const std::string& target,
                          const std::string& body, const std::string& content_type,
                          const std::string& accept, bool dedicated, const Headers& extra);
  // The whole response body; non-2xx becomes its Status.
  Result<std::string> Do(const std::string& method, const std::string& target,
                         const std::string& body = "", const std::string& content_type = "",
                         const std::string& accept = "application/json", const Headers& extra = {});
  Result<Json> DoJson(const std::string& method, const std::string& target,
                      const std::string& body = "", const std::string& content_type = "");
  Status ErrorFrom(const std::string& method, const std::string& target, Opened& opened);
  void Release(std::unique_ptr<HttpConnection> c, const HttpHead& head);
  Result<std::shared_ptr<net::TlsContext>> TlsFor(const Credential& c);
  // "kube: GET /api/v1/namespaces/n/pods" for messages.
  std::string Prefix(const std::string& method, const std::string& target) {
    return "kube: " + method + " " + WithoutQuery(target);
  }

  const ClusterConfig config;
  const ClientOptions options;
  const net::Endpoint endpoint;
  CredentialSource credentials;
  TokenBucket bucket;
  std::atomic<int64_t> requests{0};

  std::mutex mu;  // guards the pool and the TLS context
  std::vector<std::unique_ptr<HttpConnection>> idle;
  std::shared_ptr<net::TlsContext> tls;
  std::string tls_cert_pem;  // the client certificate `tls` was built with
};

Result<std::shared_ptr<net::TlsContext>> Client::Impl::TlsFor(const Credential& c) {
  std::lock_guard<std::mutex> lock(mu);
  if (tls && c.client_cert_pem == tls_cert_pem) return tls;
  // An exec plugin handed out a new client certificate.
  auto made = net::MakeTlsContext(config.ca_pem, config.insecure_skip_tls_verify, c.client_cert_pem,
                                  c.client_key_pem);
  if (!made.ok()) return made.status().WithPrefix(config.description);
  tls = *made;
  tls_cert_pem = c.client_cert_pem;
  idle.clear();
  return tls;
}

void Client::Impl::Release(std::unique_ptr<HttpConnection> c, const HttpHead& head) {
  if (!head.keep_alive || !c->body_done()) return;
  std::lock_guard<std::mutex> lock(mu);
  if (c->tls() != tls.get() || idle.size() >= kMaxIdleConnections) return;
  idle.push_back(std::move(c));
}

Result<Client::Impl::Opened> Client::Impl::OpenOnce(const std::string& method,
                                                    const std::string& target,
                                                    const std::string& body,
                                                    const std::string& content_type,
                                                    const std::string& accept, bool dedicated,
                                                    const Headers& extra) {
  const std::string prefix = Prefix(method, target);
  Credential credential;
  std::shared_ptr<net::TlsContext> context;
  if (endpoint.tls) {  // like kubectl, no credentials over plain http
    Result<Credential> got = credentials.Get();
    if (!got.ok()) return got.status().WithPrefix(prefix);
    credential = std::move(*got);
    EDL_ASSIGN_OR_RETURN(context, TlsFor(credential));
  }
  std::vector<std::pair<std::string, std::string>> headers{{"Accept", accept}};
  if (!credential.token.empty()) {
    headers.emplace_back("Authorization", "Bearer " + credential.token);
  }
  if (!content_type.empty()) headers.emplace_back("Content-Type", content_type);
  headers.insert(headers.end(), extra.begin(), extra.end());
  const std::string full_target = endpoint.path_prefix + target;
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<HttpConnection> c;
    if (!dedicated && attempt == 0) {
      std::lock_guard<std::mutex> lock(mu);
      while (!idle.empty() && !c) {
        c = std::move(idle.back());
        idle.pop_back();
        if (c->LooksClosed() || c->tls() != context.get()) c.reset();
      }
    }
    const bool reused = c != nullptr;
    const TimePoint deadline = SteadyClock::now() + options.request_timeout;
    if (!c) {
      auto made = HttpConnection::Connect(endpoint, context, deadline);
      if (!made.ok()) return made.status().WithPrefix(prefix);
      c = std::move(*made);
    }
    ++requests;
    Status sent = c->Send(method, full_target, headers, body, deadline);
    Result<HttpHead> head = sent.ok() ? c->ReadHead(deadline) : Result<HttpHead>(sent);
    if (head.ok()) return Opened{std::move(c), std::move(*head)};
    // A pooled connection the server closed meanwhile: try a fresh one.
    if (reused && head.status().code() == StatusCode::kUnavailable) continue;
    return head.status().WithPrefix(prefix);
  }
}

Result<Client::Impl::Opened> Client::Impl::Open(const std::string& method,
                                                const std::string& target, const std::string& body,
                                                const std::string& content_type,
                                                const std::string& accept, bool dedicated,
                                                const Headers& extra) {
  bool refreshed = false;
  int throttled = 0;
  while (true) {
    bucket.Acquire();
    EDL_ASSIGN_OR_RETURN(Opened opened,
                         OpenOnce(method, target, body, content_type, accept, dedicated, extra));
    const int status = opened.head.status;
    const bool retry_401 = status == 401 && endpoint.tls && !refreshed;
    // A 5xx with Retry-After (an API server shutting down, or one that
    // asks for patience) is re-sent like a 429, as client-go does; one
    // without it is the caller's to handle.
    const bool wants_retry =
        status == 429 || (status >= 500 && !opened.head.Header("Retry-After").empty());
    const bool retry_429 = wants_retry && throttled < kMaxThrottledRetries;
    if (!retry_401 && !retry_429) return opened;
    if (retry_401 && !credentials.Invalidate()) return opened;
    // Drain the small error body so the connection can be reused.
    Result<std::string> drained = opened.connection->ReadWholeBody(
        kMaxErrorBodyBytes, SteadyClock::now() + options.request_timeout);
    if (drained.ok()) Release(std::move(opened.connection), opened.head);
    if (retry_401) {
      refreshed = true;
      EDL_LOG(INFO) << "kube: " << method << " " << WithoutQuery(target)
                    << ": 401, refreshing credentials and retrying once";
    } else {
      ++throttled;
      auto wait = RetryAfter(opened.head, options.max_retry_after);
      EDL_LOG(INFO) << "kube: " << method << " " << WithoutQuery(target) << ": " << status
                    << ", retrying in " << wait.count() << " ms";
      std::this_thread::sleep_for(wait);
    }
  }
}

Status Client::Impl::ErrorFrom(const std::string& method, const std::string& target,
                               Opened& opened) {
  Result<std::string> body = opened.connection->ReadWholeBody(
      kMaxErrorBodyBytes, SteadyClock::now() + options.request_timeout);
  ApiError e = DecodeApiError(opened.head.status, body.ok() ? *body : "");
  if (body.ok()) Release(std::move(opened.connection), opened.head);
  return ToStatus(method, WithoutQuery(target), e);
}

Result<std::string> Client::Impl::Do(const std::string& method, const std::string& target,
                                     const std::string& body, const std::string& content_type,
                                     const std::string& accept, const Headers& extra) {
  EDL_ASSIGN_OR_RETURN(Opened opened,
                       Open(method, target, body, content_type, accept, false, extra));
  if (opened.head.status < 200 || opened.head.status >= 300) {
    return ErrorFrom(method, target, opened);
  }
  Result<std::string> text =
      opened.connection->ReadWholeBody(kMaxBodyBytes, SteadyClock::now() + options.request_timeout);
  if (!text.ok()) {
    return text.status().WithPrefix("kube: " + method + " " + WithoutQuery(target));
  }
  Release(std::move(opened.connection), opened.head);
  return text;
}

Result<Json> Client::Impl::DoJson(const std::string& method, const std::string& target,
                                  const std::string& body, const std::string& content_type) {
  EDL_ASSIGN_OR_RETURN(std::string text, Do(method, target, body, content_type));
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    return Internal(Prefix(method, target) + ": the response is not JSON: " + text.substr(0, 120));
  }
  return j;
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::Create(ClusterConfig config, ClientOptions options) {
  Result<net::Endpoint> endpoint = net::ParseServer(config.server, config.tls_server_name);
  if (!endpoint.ok()) return endpoint.status().WithPrefix(config.description);
  endpoint->user_agent = "edl-kube/0.1";
  if (options.request_timeout.count() <= 0) {
    return InvalidArgument("kube: request_timeout must be positive");
  }
  auto impl = std::make_unique<Impl>(std::move(config), options, std::move(*endpoint));
  if (impl->endpoint.tls) {
    // Validates the PEMs now; an exec certificate rebuilds it later.
    auto made = net::MakeTlsContext(impl->config.ca_pem, impl->config.insecure_skip_tls_verify,
                                    impl->config.client_cert_pem, impl->config.client_key_pem);
    if (!made.ok()) return made.status().WithPrefix(impl->config.description);
    impl->tls = std::move(*made);
    impl->tls_cert_pem = impl->config.client_cert_pem;
  }
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

const std::string& Client::default_namespace() const { return impl_->config.namespace_name; }

int64_t Client::requests_sent() const { return impl_->requests.load(); }

Result<Json> Client::Get(const Resource& r, const std::string& ns, const std::string& name) {
  return impl_->DoJson("GET", ObjectPath(r, ns, name));
}

Result<Json> Client::List(const Resource& r, const std::string& ns, const ListOptions& o) {
  std::string base = CollectionPath(r, ns) + SelectorQuery(o);
  Json result;
  Json items = Json::array();
  std::string next;
  for (bool first = true; first || !next.empty(); first = false) {
    std::string target = base;
    if (o.limit > 0) AddQuery(&target, "limit", std::to_string(o.limit));
    if (first) {
      AddQuery(&target, "resourceVersion", o.resource_version);
    } else {
      AddQuery(&target, "continue", next);
    }
    EDL_ASSIGN_OR_RETURN(Json page, impl_->DoJson("GET", target));
    if (!page.is_object()) {
      return Internal(impl_->Prefix("GET", target) + ": the list is not an object");
    }
    if (auto it = page.find("items"); it != page.end() && it->is_array()) {
      for (Json& item : *it) items.push_back(std::move(item));
    }
    next.clear();
    if (auto m = page.find("metadata"); m != page.end() && m->is_object()) {
      if (auto c = m->find("continue"); c != m->end() && c->is_string()) {
        next = c->get<std::string>();
      }
    }
    if (first) result = std::move(page);
  }
  result["items"] = std::move(items);
  if (auto m = result.find("metadata"); m != result.end() && m->is_object()) {
    m->erase("continue");
    m->erase("remainingItemCount");
  }
  return result;
}

Result<Json> Client::Create(const Resource& r, const std::string& ns, const Json& object) {
  return impl_->DoJson("POST", CollectionPath(r, ns), object.dump(), "application/json");
}

Result<Json> Client::Delete(const Resource& r, const std::string& ns, const std::string& name,
                            const DeleteOptions& o) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (!o.propagation_policy.empty()) {
    body["propagationPolicy"] = o.propagation_policy;
  }
  if (o.grace_period_seconds) body["gracePeriodSeconds"] = *o.grace_period_seconds;
  if (!o.precondition_uid.empty()) {
    body["preconditions"] = {{"uid", o.precondition_uid}};
  }
  return impl_->DoJson("DELETE", ObjectPath(r, ns, name), body.dump(), "application/json");
}

Result<Json> Client::Patch(const Resource& r, const std::string& ns, const std::string& name,
                           const Json& patch, PatchType type, const std::string& subresource) {
  const char* content_type = "application/merge-patch+json";
  if (type == PatchType::kStrategicMerge) {
    content_type = "application/strategic-merge-patch+json";
  } else if (type == PatchType::kJson) {
    content_type = "application/json-patch+json";
  }
  std::string path = ObjectPath(r, ns, name);
  if (!subresource.empty()) path += "/" + subresource;
  return impl_->DoJson("PATCH", path, patch.dump(), content_type);
}

Result<std::string> Client::GetRaw(const std::string& path_and_query) {
  return impl_->Do("GET", path_and_query, "", "", "*/*");
}

Result<std::string> Client::PostRaw(
    const std::string& path, const std::string& body, const std::string& content_type,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  return impl_->Do("POST", path, body, content_type, "*/*", headers);
}

Status Client::Stream(const std::string& path_and_query,
                      const std::function<bool(std::string_view)>& sink) {
  EDL_ASSIGN_OR_RETURN(Impl::Opened opened,
                       impl_->Open("GET", path_and_query, "", "", "*/*", true));
  if (opened.head.status < 200 || opened.head.status >= 300) {
    return impl_->ErrorFrom("GET", path_and_query, opened);
  }
  std::vector<char> buf(64 * 1024);
  while (true) {
    Result<size_t> n = opened.connection->ReadBody(buf.data(), buf.size(), net::kNoDeadline);
    if (!n.ok()) {
      return n.status().WithPrefix("kube: GET " + WithoutQuery(path_and_query));
    }
    if (*n == 0) return Status::Ok();
    if (!sink(std::string_view(buf.data(), *n))) return Status::Ok();
  }
}

Result<std::unique_ptr<WatchStream>> Client::Watch(const Resource& r, const std::string& ns,
                                                   const ListOptions& o,
                                                   std::chrono::seconds timeout_seconds,
                                                   bool allow_bookmarks) {
  std::string target = CollectionPath(r, ns) + SelectorQuery(o);
  AddQuery(&target, "watch", "1");
  AddQuery(&target, "resourceVersion", o.resource_version);
  if (allow_bookmarks) AddQuery(&target, "allowWatchBookmarks", "true");
  if (timeout_seconds.count() > 0) {
    AddQuery(&target, "timeoutSeconds", std::to_string(timeout_seconds.count()));
  }
  EDL_ASSIGN_OR_RETURN(Impl::Opened opened,
                       impl_->Open("GET", target, "", "", "application/json", true));
  if (opened.head.status < 200 || opened.head.status >= 300) {
    return impl_->ErrorFrom("GET", target, opened);
  }
  return std::make_unique<WatchStream>(std::move(opened.connection), "kube: watch " + target);
}

}  // namespace edl::kube
