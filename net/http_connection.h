// One HTTP/1.1 client connection, plain TCP or TLS, with a deadline on every
// step: the one client both the RPC channel (net/rpc_channel.cc) and the
// Kubernetes client (kube/) are built on. A request is written with one
// gather write of its header and its body's pieces (net/payload.h);
// response bodies are read piece by piece with no size limit (watch and log
// streams), whole up to a caller's limit, or, when their length is known,
// straight from the socket into one pooled block. Chunked, Content-Length
// and close-delimited bodies are all accepted. Beast and OpenSSL stay inside
// http_connection.cc.
//
// A connection is used by one thread at a time; only Cancel() may be called
// from another thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/http_endpoint.h"
#include "net/payload.h"

namespace edl::net {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
inline constexpr TimePoint kNoDeadline = TimePoint::max();

// An OpenSSL client context: verification against `ca_pem` (system roots
// when empty) or none when `insecure`, an optional client certificate, and
// ALPN offering http/1.1 only.
class TlsContext;
Result<std::shared_ptr<TlsContext>> MakeTlsContext(const std::string& ca_pem, bool insecure,
                                                   const std::string& cert_pem,
                                                   const std::string& key_pem);

struct HttpHead {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  bool keep_alive = true;
  // The first header named `name` (case-insensitive), "" if absent.
  std::string Header(const std::string& name) const;
};

class HttpConnection {
 public:
  // Resolves, connects and (for TLS) handshakes, all before `deadline`.
  // `tls` may be null for a plain endpoint. Unavailable / DeadlineExceeded.
  static Result<std::unique_ptr<HttpConnection>> Connect(const Endpoint& endpoint,
                                                         std::shared_ptr<TlsContext> tls,
                                                         TimePoint deadline);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Writes one request; `headers` are added to Host and User-Agent. A body
  // is sent with Content-Length when it is not empty or the method is
  // POST, PUT or PATCH.
  Status Send(const std::string& method, const std::string& target,
              const std::vector<std::pair<std::string, std::string>>& headers, const Payload& body,
              TimePoint deadline);
  Status Send(const std::string& method, const std::string& target,
              const std::vector<std::pair<std::string, std::string>>& headers,
              const std::string& body, TimePoint deadline);
  // Reads the response status line and headers of the request just sent.
  Result<HttpHead> ReadHead(TimePoint deadline);
  // Reads the next body bytes into buf[0, size): the count, 0 at the end of
  // the body. Blocks until at least one byte, the end, or `deadline`.
  Result<size_t> ReadBody(char* buf, size_t size, TimePoint deadline);
  // The rest of the body; ResourceExhausted past `limit` bytes.
  Result<std::string> ReadWholeBody(size_t limit, TimePoint deadline);
  // The same as one pooled block: a body of known length is read straight
  // from the socket into it (plain connections), others are copied in.
  Result<Bytes> ReadWholeBodyBytes(size_t limit, TimePoint deadline);
  // Whether the whole response has been read.
  bool body_done() const;
  // An idle connection that is readable was closed by the server.
  bool LooksClosed() const;
  // Thread-safe: aborts a blocked read/write (it returns Unavailable) and
  // makes every later call fail.
  void Cancel();
  // Which TLS context this connection was made with (null for plain).
  const TlsContext* tls() const;
  // "host:port" for messages.
  const std::string& peer() const;

 private:
  struct Impl;
  explicit HttpConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edl::net
