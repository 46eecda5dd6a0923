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
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/http_handling.h"
#include "net/status_mapping.h"

namespace edl::net::internal {

namespace http = boost::beast::http;

using BeastRequest = http::request<http::string_body>;

// `body`: the body as read by KnownLengthBody; unset, the parser's string
// body is copied into one.
inline HttpRequest FromBeastRequest(BeastRequest&& message,
                                    std::optional<Bytes> body = std::nullopt) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  // A request relayed by the Kubernetes API server's service proxy has lost
  // its Authorization header (the API server consumes it); it carries the
  // job secret in kRelayedAuthorizationHeader instead.
  auto relayed = message.find(kRelayedAuthorizationHeader);
  request.authorization = std::string(
      relayed != message.end() ? relayed->value() : message[http::field::authorization]);
  request.version = message.version();
  request.keep_alive = message.keep_alive();
  request.body = body ? std::move(*body) : Bytes::Copy(message.body());
  return request;
}

// A body of known length (Content-Length) read straight from the socket
// into one pooled block (net/payload.h), bypassing the parser: no parser
// round trips, no copy through the read buffer, and a block of the same
// size as last time is already paged in. A peer announcing a large body
// costs address space up front and memory only as it sends.
class KnownLengthBody {
 public:
  explicit KnownLengthBody(size_t length) : bytes_(Bytes::Allocate(length)) {}
  bool done() const { return filled_ >= bytes_.size(); }
  // The rest to fill (asio::async_read with LargeTransfers). REQUIRES: !done().
  boost::asio::mutable_buffer Rest() {
    return boost::asio::buffer(bytes_.data() + filled_, bytes_.size() - filled_);
  }
  void Filled(size_t n) { filled_ += n; }
  Bytes Take() && { return std::move(bytes_); }

 private:
  Bytes bytes_;
  size_t filled_ = 0;
};

// Call after a parser has read a message's header (http::async_read_header).
// When the body has a known length (already checked against the parser's
// body_limit), moves the body bytes already in `buffer` into the body and
// returns the rest to read; nullopt when the parser must read the body
// itself (chunked, until EOF) or the message is already complete.
template <bool isRequest, typename Body>
std::optional<KnownLengthBody> StartKnownLengthBody(http::parser<isRequest, Body>& parser,
                                                    boost::beast::flat_buffer& buffer) {
  if (!parser.is_header_done() || parser.is_done() || parser.chunked() ||
      !parser.content_length()) {
    return std::nullopt;
  }
  const std::uint64_t length = *parser.content_length();
  if (length > std::numeric_limits<size_t>::max() / 2) return std::nullopt;
  KnownLengthBody body{static_cast<size_t>(length)};
  size_t have = std::min<size_t>(buffer.size(), static_cast<size_t>(length));
  if (have > 0) {
    boost::asio::buffer_copy(body.Rest(), buffer.data(), have);
    body.Filled(have);
  }
  buffer.consume(have);
  return body;
}

// A completion condition for asio::async_read/async_write that lets each
// system call move up to 16 MiB (asio's default stops at 64 KiB, a
// thousand calls for a 64 MiB body).
struct LargeTransfers {
  size_t operator()(const boost::beast::error_code& ec, size_t) const {
    return ec ? 0 : size_t{16} << 20;
  }
};

// `header`, then `body`, then the payload's pieces, as one gather write.
inline std::vector<boost::asio::const_buffer> GatherBuffers(const std::string& header,
                                                            const std::string& body,
                                                            const Payload& payload) {
  std::vector<boost::asio::const_buffer> buffers;
  std::vector<Payload::Piece> pieces = payload.Pieces();
  buffers.reserve(2 + pieces.size());
  buffers.emplace_back(header.data(), header.size());
  if (!body.empty()) buffers.emplace_back(body.data(), body.size());
  for (const Payload::Piece& p : pieces) buffers.emplace_back(p.data, p.size);
  return buffers;
}

inline bool IsHttpError(const boost::beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::need_more).category();
}

// The reply to a failed request read, or nullopt when the connection should
// just be closed (peer went away, timeout, socket error).
inline std::optional<HttpReply> ReplyForReadError(const boost::beast::error_code& ec,
                                                  size_t max_body_bytes) {
  if (!IsHttpError(ec) || ec == http::error::end_of_stream || ec == http::error::partial_message) {
    return std::nullopt;
  }
  HttpReply reply;
  reply.edl_status = StatusCodeName(StatusCode::kInvalidArgument);
  reply.close = true;
  if (ec == http::error::body_limit) {
    reply.status = 413;
    reply.body =
        "request body exceeds the server's limit of " + std::to_string(max_body_bytes) + " bytes";
  } else if (ec == http::error::header_limit) {
    reply.status = 431;
    reply.body = "request header too large";
  } else {
    reply.status = 400;
    reply.body = "malformed HTTP request: " + ec.message();
  }
  return reply;
}

// The response header for `reply`, whose body is reply.body followed by
// reply.payload.
inline http::response<http::empty_body> BeastResponseHeader(const HttpReply& reply,
                                                            unsigned version, bool keep_alive) {
  // Beast rejects (throws on) codes outside 100-999.
  int status = reply.status >= 100 && reply.status <= 999 ? reply.status : 500;
  http::response<http::empty_body> response(static_cast<http::status>(status),
                                            version == 10 ? 10 : 11);
  response.set(http::field::server, "edl");
  response.set(http::field::content_type, reply.content_type);
  if (!reply.edl_status.empty()) {
    response.set(kEdlStatusHeader, reply.edl_status);
  }
  response.keep_alive(keep_alive && !reply.close);
  response.content_length(reply.body.size() + reply.payload.size());
  return response;
}

}  // namespace edl::net::internal
