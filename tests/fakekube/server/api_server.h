// ApiServer: the fake kube-apiserver's HTTPS front end over a Store. Serves
// what kubectl 1.32 and client-go need: /version,
// discovery, OpenAPI v3, CRUD with selectors, watch (chunked, bookmarks,
// 410 as an in-band ERROR), pods/log (with follow) and the service/pod
// proxy, all behind a bearer token.
//
// Test hooks, behind the token too, for the failures a real API server
// shows (tests/fakekube/crash_test.cc): POST /debug/fakekube/faults?code=
// 429|500|503&count=N&ms=T[&retry_after=S] answers the next N requests, and
// every request for T ms, with that error (api_faults.h); POST
// /debug/fakekube/cut-watches drops every watch's connection mid-body; POST
// /debug/fakekube/restart?down_ms=T closes the listener and every
// connection about 0.2 s later (after answering 202) and serves again on the
// same port with the same certificate T ms after, the store (objects,
// resourceVersions, watch history) untouched, as an API server restarting
// over the same etcd; GET /debug/fakekube/state says {"restarts",
// "restarting", "faults_injected", "watches"} (watches open now); GET
// /debug/fakekube/audit[?user=NAME] the audit log (audit_log.h), all of it or
// that user's, as an audit.k8s.io/v1 EventList.
//
// Identities (identity.h): the token is the admin's; Options::user_tokens
// adds users, and pods' service-account tokens (ServiceAccountToken under
// Options::service_account_key) authenticate as their service account.
// With Options::rbac, every identity but the admin is held to the Roles
// and RoleBindings in the store (rbac_authorizer.h), the test hooks
// included; without it, as kube-apiserver's AlwaysAllow, everyone
// authenticated may do everything.
//
// HTTP/1.1 with keep-alive on Boost.Beast; one coroutine per connection on
// its own strand, a few threads on one io_context. Thread-safe. The Store
// must outlive the server.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "tests/fakekube/server/api_faults.h"
#include "tests/fakekube/server/audit_log.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class ApiServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 0;       // 0: an ephemeral port, see port()
    std::string token;  // the admin's; "" accepts every request (as the admin's)
    std::map<std::string, std::string> user_tokens;  // token -> user name
    std::string service_account_key;                 // signs pods' tokens; "" accepts none
    bool rbac = false;                               // authorize by Roles and RoleBindings
    std::string cert_dir;  // if set, ca.crt/server.crt/server.key are written there
    bool tls = true;
    std::chrono::seconds default_watch_timeout{1800};
    std::chrono::seconds bookmark_interval{60};
  };

  ApiServer(Store& store, Options options);
  ~ApiServer();  // Stop()s
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Generates the certificates (TLS), binds and starts serving.
  // Unavailable naming host:port if it cannot bind.
  Status Start();
  int port() const;
  // Stops accepting, ends every connection and watch, joins the threads.
  // Idempotent.
  void Stop();
  // What the test hooks above do. Restart() returns once serving again
  // (or Stop() came first: FailedPrecondition); not from a handler thread.
  Status Restart(std::chrono::milliseconds down);
  size_t CutWatches();  // the number cut
  void InjectFaults(const FaultPlan& plan);
  int64_t restarts() const;
  int64_t faults_injected() const;
  // Every request answered so far (audit_log.h).
  const AuditLog& audit() const;

  // A kubeconfig (YAML) for this server: server https://127.0.0.1:PORT,
  // certificate-authority-data, the token, namespace default.
  // REQUIRES: Start() succeeded.
  std::string Kubeconfig() const;
  // The CA certificate (PEM) that signed the server's certificate; "" if
  // !tls. REQUIRES: Start() succeeded.
  std::string CaCertificatePem() const;

  // For services/NAME[:PORT]/proxy/PATH and pods/NAME[:PORT]/proxy/PATH:
  // given the Service or Pod and the port, returns "ip:port" to forward the
  // GET to, or nullopt (503). Without a target every proxy request is 503.
  // Watches being served now (for tests that must wait until a client
  // watches).
  size_t open_watches() const;

  using ProxyTarget =
      std::function<std::optional<std::string>(const Json& pod_or_service, int port)>;
  void SetProxyTarget(ProxyTarget target);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edl::fakekube
