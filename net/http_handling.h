// The socket-free half of RpcServer: what a parsed HTTP request is answered
// with (auth, routing, handler errors -> HTTP status + Edl-Status header), and
// parsing/serializing raw HTTP/1.1 bytes, so the same logic can be driven by
// a fuzzer or a test without sockets (see docs/rpc.md for the wire format).
//
// HttpRouter is immutable while it serves: register handlers first, then
// Handle() may be called from many threads at once.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "net/rpc.h"

namespace edl::net {

struct HttpRequest {
  std::string method;         // "POST", "GET", or whatever the client sent
  std::string target;         // "/edl.Master/GetTask", maybe with "?query"
  std::string authorization;  // the Authorization header, "" if absent
  Bytes body;
  unsigned version = 11;  // 10 for HTTP/1.0, 11 for HTTP/1.1
  bool keep_alive = true;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string edl_status;  // StatusCodeName on errors, "" on success
  std::string body;        // errors and GETs
  Payload payload;         // an RPC handler's answer, sent after `body`
  bool close = false;      // close the connection after this reply
  bool rpc = false;        // the reply of an RPC handler (see ServerOptions::reply_gate)
};

// The reply carrying `status` as HTTP status + Edl-Status + message body.
// REQUIRES: !status.ok().
HttpReply ErrorReply(const Status& status);

class HttpRouter {
 public:
  // REQUIRES: secret non-empty.
  explicit HttpRouter(std::string secret);

  void AddRpc(const std::string& path, RpcHandler handler);
  void AddRpc(const std::string& path, RpcBodyHandler handler);
  void AddGet(const std::string& path, GetHandler handler, bool public_access);

  // Public GETs are served without the secret; everything else needs
  // `Authorization: Bearer <secret>` (401 otherwise), then an unknown path is
  // 404 and a known path with the wrong method 405. Never throws: a handler
  // that throws is answered 500 Internal.
  HttpReply Handle(const HttpRequest& request) const;

 private:
  struct GetRoute {
    GetHandler handler;
    bool public_access;
  };
  bool Authorized(std::string_view authorization) const;

  std::string expected_authorization_;  // "Bearer <secret>"
  std::map<std::string, RpcBodyHandler, std::less<>> rpcs_;
  std::map<std::string, GetRoute, std::less<>> gets_;
};

// One request parsed off the front of a byte buffer.
struct ParsedHttpRequest {
  enum class Kind {
    kRequest,     // `request` holds it; `consumed` bytes were used
    kIncomplete,  // the bytes end inside a request (a real server waits)
    kError,       // malformed or too large: answer `error_reply`, close
  };
  Kind kind = Kind::kIncomplete;
  HttpRequest request;
  HttpReply error_reply;
  size_t consumed = 0;
};

// Parses the first HTTP/1.1 request in `bytes` with Beast's request parser,
// refusing bodies over `max_body_bytes` (413) and malformed input (400).
ParsedHttpRequest ParseHttpRequest(std::string_view bytes, size_t max_body_bytes);

// The HTTP/1.x header of `reply` whose body (body + payload) is
// `content_length` bytes, as the server writes it.
std::string HttpReplyHeader(const HttpReply& reply, unsigned version, bool keep_alive);

// The HTTP/1.x bytes of `reply` as the server writes them.
std::string SerializeHttpReply(const HttpReply& reply, unsigned version, bool keep_alive);

// What a server connection would write back after receiving `bytes` (and
// then EOF): every pipelined request answered in turn, stopping at an error
// reply, a `Connection: close` or an incomplete request. For fuzzing/tests.
std::string ServeHttpBytes(const HttpRouter& router, std::string_view bytes, size_t max_body_bytes);

}  // namespace edl::net
