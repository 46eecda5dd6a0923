// Private to net/*.cc: conversions between Beast messages and the
// socket-free HttpRequest/HttpReply of net/http_handling.h, shared by the
// server's socket loop and ParseHttpRequest so both behave the same.
#pragma once

#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>
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
  request.authorization = std::string(message[http::field::authorization]);
  request.version = message.version();
  request.keep_alive = message.keep_alive();
  request.body = std::move(message.body());
  return request;
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
