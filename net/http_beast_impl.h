// Private to net/*.cc: conversions between Beast messages and the
// socket-free HttpRequest/HttpReply of net/http_handling.h, shared by the
// server's socket loop and ParseHttpRequest so both behave the same.
#pragma once

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "net/http_handling.h"
#include "net/status_mapping.h"

namespace edl::net::internal {

namespace http = boost::beast::http;

using BeastRequest = http::request<http::string_body>;
using BeastResponse = http::response<http::string_body>;

inline HttpRequest FromBeastRequest(BeastRequest&& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  // A request relayed by the Kubernetes API server's service proxy has lost
  // its Authorization header (the API server consumes it); it carries the
  // job secret in kRelayedAuthorizationHeader instead.
  auto relayed = message.find(kRelayedAuthorizationHeader);
  request.authorization = std::string(relayed != message.end()
                                          ? relayed->value()
                                          : message[http::field::authorization]);
  request.version = message.version();
  request.keep_alive = message.keep_alive();
  request.body = std::move(message.body());
  return request;
}

// A body of known length (Content-Length) read straight from the socket
// into its final string, bypassing the parser: no per-64 KB parser round
// trips, no copy through the read buffer. Capacity is reserved once; bytes
// are committed piece by piece (kPiece at most), so a peer announcing a
// large body costs memory only as it actually sends it.
class KnownLengthBody {
 public:
  static constexpr size_t kPiece = size_t{8} << 20;

  KnownLengthBody(std::string* body, size_t length)
      : body_(body), length_(length) {}
  bool done() const { return body_->size() >= length_; }
  // The next storage to fill completely (asio::async_read). REQUIRES: !done().
  boost::asio::mutable_buffer Next() {
    size_t old = body_->size();
    size_t n = std::min(length_ - old, kPiece);
    body_->resize(old + n);
    return boost::asio::buffer(body_->data() + old, n);
  }

 private:
  std::string* body_;
  size_t length_;
};

// Call after a parser has read a message's header (http::async_read_header).
// When the body has a known length (already checked against the parser's
// body_limit), moves the body bytes already in `buffer` into the body and
// returns the rest to read; nullopt when the parser must read the body
// itself (chunked, until EOF) or the message is already complete.
template <bool isRequest>
std::optional<KnownLengthBody> StartKnownLengthBody(
    http::parser<isRequest, http::string_body>& parser,
    boost::beast::flat_buffer& buffer) {
  if (!parser.is_header_done() || parser.is_done() || parser.chunked() ||
      !parser.content_length()) {
    return std::nullopt;
  }
  std::string& body = parser.get().body();
  const std::uint64_t length = *parser.content_length();
  if (length > body.max_size()) return std::nullopt;  // the parser refuses it
  body.clear();
  body.reserve(static_cast<size_t>(length));
  size_t have = std::min<size_t>(buffer.size(), static_cast<size_t>(length));
  body.resize(have);
  boost::asio::buffer_copy(boost::asio::buffer(body.data(), have),
                           buffer.data());
  buffer.consume(have);
  return KnownLengthBody(&body, static_cast<size_t>(length));
}

inline bool IsHttpError(const boost::beast::error_code& ec) {
  return ec.category() ==
         http::make_error_code(http::error::need_more).category();
}

// The reply to a failed request read, or nullopt when the connection should
// just be closed (peer went away, timeout, socket error).
inline std::optional<HttpReply> ReplyForReadError(
    const boost::beast::error_code& ec, size_t max_body_bytes) {
  if (!IsHttpError(ec) || ec == http::error::end_of_stream ||
      ec == http::error::partial_message) {
    return std::nullopt;
  }
  HttpReply reply;
  reply.edl_status = StatusCodeName(StatusCode::kInvalidArgument);
  reply.close = true;
  if (ec == http::error::body_limit) {
    reply.status = 413;
    reply.body = "request body exceeds the server's limit of " +
                 std::to_string(max_body_bytes) + " bytes";
  } else if (ec == http::error::header_limit) {
    reply.status = 431;
    reply.body = "request header too large";
  } else {
    reply.status = 400;
    reply.body = "malformed HTTP request: " + ec.message();
  }
  return reply;
}

inline BeastResponse ToBeastResponse(HttpReply reply, unsigned version,
                                     bool keep_alive) {
  // Beast rejects (throws on) codes outside 100-999.
  int status = reply.status >= 100 && reply.status <= 999 ? reply.status : 500;
  BeastResponse response(static_cast<http::status>(status),
                         version == 10 ? 10 : 11);
  response.set(http::field::server, "edl");
  response.set(http::field::content_type, reply.content_type);
  if (!reply.edl_status.empty()) {
    response.set(kEdlStatusHeader, reply.edl_status);
  }
  response.keep_alive(keep_alive && !reply.close);
  response.body() = std::move(reply.body);
  response.prepare_payload();
  return response;
}

}  // namespace edl::net::internal
