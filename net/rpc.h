// RPC over HTTP/1.1 (docs/rpc.md): `POST /<Service>/<Method>` with an opaque
// binary body, keep-alive connections, one server per process and port.
// Every request must carry the job's secret (`Authorization: Bearer <secret>`,
// or the same value in `X-Edl-Authorization` for requests relayed by the
// Kubernetes API server's service proxy, which consumes Authorization); one
// without it is answered 401 and never reaches a handler.
//
// Errors travel as HTTP status plus an `Edl-Status` header holding the
// StatusCode name and the message as the body, so a handler's Status comes
// out of RpcChannel::Call with the same code and message.
//
// Boost.Beast stays inside net/*.cc; this header includes only the standard
// library.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/payload.h"

namespace edl::net {

// Where a relayed request carries "Bearer <secret>" (see above).
inline constexpr char kRelayedAuthorizationHeader[] = "X-Edl-Authorization";

using Millis = std::chrono::milliseconds;

// Handles one RPC: request body in, response body or error out. Called on a
// server thread; must not block for long (no waiting on other RPCs).
using RpcHandler = std::function<Result<std::string>(std::string_view body)>;
// The same without copies: the body as received (tensors may view it) in,
// a gather payload (which may borrow tensor storage) out.
using RpcBodyHandler = std::function<Result<Payload>(const Bytes& body)>;

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};
// Handles a GET (status page, /status JSON, /metrics).
using GetHandler = std::function<HttpResponse()>;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;        // 0: an ephemeral port, see RpcServer::port()
  std::string secret;  // REQUIRES: non-empty
  // Threads, each with an event loop of its own; connections are dealt to
  // them in turn, so handlers of different connections may run in parallel
  // and a long handler delays the other connections of its thread.
  int num_threads = 2;
  size_t max_body_bytes = size_t{1} << 30;
  Millis idle_timeout{60000};  // a connection silent this long is closed
  // Holds back the reply of every RPC handler (not GETs) until the gate
  // calls `release`, from any thread: the master answers once its journal
  // has the change on disk, without a server thread waiting for the disk.
  // A release with an error sends that error instead. Unset: no waiting.
  std::function<void(std::function<void(Status)> release)> reply_gate;
};

// Thread-safe. Register handlers before Start().
class RpcServer {
 public:
  explicit RpcServer(ServerOptions options);
  ~RpcServer();  // Stop()s
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // path: "/edl.Master/GetTask". Unknown paths get 404.
  void HandleRpc(const std::string& path, RpcHandler handler);
  void HandleRpcBody(const std::string& path, RpcBodyHandler handler);
  // GET path; `public_access` lets it through without the secret (e.g. a
  // Prometheus scraper on /metrics); otherwise the secret is required.
  void HandleGet(const std::string& path, GetHandler handler, bool public_access = false);

  // Binds and starts serving. Unavailable naming host:port if it cannot bind.
  Status Start();
  // The bound port (after Start()).
  int port() const;
  // Stops accepting, closes connections, joins threads. Idempotent.
  void Stop();

  // Statistics (for tests and /metrics): connections accepted since Start(),
  // and connections open now.
  size_t connections_accepted() const;
  size_t open_connections() const;
  // Whether Stop() has begun (replies of handlers finishing now are dropped).
  bool stopping() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ChannelOptions {
  Millis connect_timeout{2000};
  // A longer answer is refused (ResourceExhausted) before it is read.
  size_t max_body_bytes = size_t{16} << 30;
  // Between failed connection attempts: jittered exponential backoff.
  Millis initial_backoff{20};
  Millis max_backoff{2000};
};

// A client connection to one server. Thread-safe: concurrent calls are
// serialized over one keep-alive connection.
class RpcChannel {
 public:
  RpcChannel(std::string host, int port, std::string secret, ChannelOptions options = {});
  ~RpcChannel();
  RpcChannel(const RpcChannel&) = delete;
  RpcChannel& operator=(const RpcChannel&) = delete;

  // Sends one request and waits at most `deadline` for the answer. Never
  // retries by itself (only the caller knows what is idempotent). Errors:
  // Unavailable (cannot connect, connection lost; the next call reconnects,
  // after a backoff if connecting failed recently), DeadlineExceeded, or the
  // server handler's own Status (code and message preserved).
  Result<std::string> Call(const std::string& path, std::string_view body, Millis deadline);
  // The same without copies: the payload's pieces go out in one gather
  // write, and the answer is read straight into a pooled block.
  Result<Bytes> Send(const std::string& path, const Payload& body, Millis deadline);
  // A GET of `path` (status API clients).
  Result<std::string> Get(const std::string& path, Millis deadline);

  const std::string& host() const;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "host:port" -> parts. InvalidArgument naming `what` when malformed.
Status ParseAddress(const std::string& address, const std::string& what, std::string* host,
                    int* port);

}  // namespace edl::net
