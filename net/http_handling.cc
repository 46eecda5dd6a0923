#include "net/http_handling.h"

#include <boost/asio/buffer.hpp>
#include <exception>
#include <sstream>
#include <utility>

#include "net/http_beast_impl.h"
#include "net/status_mapping.h"

namespace edl::net {
namespace {

namespace http = boost::beast::http;

std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

HttpReply Refuse(int http_status, StatusCode code, std::string message) {
  HttpReply reply = ErrorReply(Status(code, std::move(message)));
  reply.status = http_status;
  return reply;
}

// Runs `f`, turning an escaping exception into a 500 reply.
template <typename F>
HttpReply Guarded(std::string_view path, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return ErrorReply(Internal("handler for " + std::string(path) + " threw: " + e.what()));
  } catch (...) {
    return ErrorReply(Internal("handler for " + std::string(path) + " threw"));
  }
}

}  // namespace

HttpReply ErrorReply(const Status& status) {
  EDL_CHECK(!status.ok()) << "ErrorReply of an OK status";
  HttpReply reply;
  reply.status = HttpStatusForCode(status.code());
  reply.edl_status = StatusCodeName(status.code());
  reply.body = status.message();
  return reply;
}

HttpRouter::HttpRouter(std::string secret)
    : expected_authorization_("Bearer " + std::move(secret)) {
  EDL_CHECK(expected_authorization_.size() > 7) << "empty RPC secret";
}

void HttpRouter::AddRpc(const std::string& path, RpcHandler handler) {
  AddRpc(path, [handler = std::move(handler)](const Bytes& body) -> Result<Payload> {
    Result<std::string> reply = handler(body.view());
    if (!reply.ok()) return reply.status();
    return Payload(std::move(reply).value());
  });
}

void HttpRouter::AddRpc(const std::string& path, RpcBodyHandler handler) {
  EDL_CHECK(!path.empty() && path[0] == '/') << "RPC path " << path;
  rpcs_[path] = std::move(handler);
}

void HttpRouter::AddGet(const std::string& path, GetHandler handler, bool public_access) {
  EDL_CHECK(!path.empty() && path[0] == '/') << "GET path " << path;
  gets_[path] = GetRoute{std::move(handler), public_access};
}

bool HttpRouter::Authorized(std::string_view authorization) const {
  // Constant time in the content of both strings (length leaks, as usual).
  const std::string& expected = expected_authorization_;
  unsigned char diff = authorization.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < authorization.size(); ++i) {
    diff |= static_cast<unsigned char>(authorization[i]) ^
            static_cast<unsigned char>(expected[i % expected.size()]);
  }
  return diff == 0;
}

HttpReply HttpRouter::Handle(const HttpRequest& request) const {
  std::string_view path = PathOf(request.target);
  auto get = gets_.find(path);
  bool is_get = request.method == "GET";
  if (is_get && get != gets_.end() && get->second.public_access) {
    return Guarded(path, [&] {
      HttpResponse response = get->second.handler();
      HttpReply reply;
      reply.status = response.status;
      reply.content_type = std::move(response.content_type);
      reply.body = std::move(response.body);
      return reply;
    });
  }
  if (!Authorized(request.authorization)) {
    return Refuse(401, StatusCode::kUnauthenticated,
                  request.authorization.empty()
                      ? "missing Authorization: Bearer <job secret> header"
                      : "wrong job secret in Authorization header");
  }
  auto rpc = rpcs_.find(path);
  if (rpc == rpcs_.end() && get == gets_.end()) {
    return Refuse(404, StatusCode::kNotFound, "no handler for " + std::string(path));
  }
  if (rpc != rpcs_.end() && request.method == "POST") {
    HttpReply reply = Guarded(path, [&] {
      Result<Payload> result = rpc->second(request.body);
      if (!result.ok()) return ErrorReply(result.status());
      HttpReply ok;
      ok.content_type = "application/octet-stream";
      ok.payload = std::move(result).value();
      return ok;
    });
    reply.rpc = true;
    return reply;
  }
  if (get != gets_.end() && is_get) {
    return Guarded(path, [&] {
      HttpResponse response = get->second.handler();
      HttpReply reply;
      reply.status = response.status;
      reply.content_type = std::move(response.content_type);
      reply.body = std::move(response.body);
      return reply;
    });
  }
  return Refuse(405, StatusCode::kUnimplemented,
                "method " + request.method + " not allowed for " + std::string(path) + " (use " +
                    (rpc != rpcs_.end() ? "POST" : "GET") + ")");
}

ParsedHttpRequest ParseHttpRequest(std::string_view bytes, size_t max_body_bytes) {
  ParsedHttpRequest parsed;
  http::request_parser<http::string_body> parser;
  parser.body_limit(max_body_bytes);
  parser.eager(true);
  boost::beast::error_code ec;
  size_t used = 0;
  while (!parser.is_done()) {
    size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    used += n;
    if (ec == http::error::need_more || (!ec && n == 0)) {
      if (n == 0 || used == bytes.size()) {
        // The real server would wait for more; at EOF this is what it sees.
        if (used == 0) return parsed;  // nothing at all: a clean EOF
        parser.put_eof(ec);
        if (!ec && parser.is_done()) break;
        if (auto reply = internal::ReplyForReadError(ec, max_body_bytes)) {
          parsed.kind = ParsedHttpRequest::Kind::kError;
          parsed.error_reply = std::move(*reply);
        }
        return parsed;  // kIncomplete unless put_eof found it malformed
      }
      ec = {};
      continue;
    }
    if (ec) {
      parsed.kind = ParsedHttpRequest::Kind::kError;
      parsed.error_reply = internal::ReplyForReadError(ec, max_body_bytes)
                               .value_or(ErrorReply(InvalidArgument("malformed HTTP request")));
      parsed.error_reply.close = true;
      return parsed;
    }
  }
  if (!parser.is_done()) return parsed;
  parsed.kind = ParsedHttpRequest::Kind::kRequest;
  parsed.request = internal::FromBeastRequest(parser.release());
  parsed.consumed = used;
  return parsed;
}

std::string HttpReplyHeader(const HttpReply& reply, unsigned version, bool keep_alive) {
  std::ostringstream out;
  out << internal::BeastResponseHeader(reply, version, keep_alive).base();
  return out.str();
}

std::string SerializeHttpReply(const HttpReply& reply, unsigned version, bool keep_alive) {
  std::string out = HttpReplyHeader(reply, version, keep_alive);
  out += reply.body;
  for (const Payload::Piece& p : reply.payload.Pieces()) out.append(p.data, p.size);
  return out;
}

std::string ServeHttpBytes(const HttpRouter& router, std::string_view bytes,
                           size_t max_body_bytes) {
  std::string written;
  while (!bytes.empty()) {
    ParsedHttpRequest parsed = ParseHttpRequest(bytes, max_body_bytes);
    if (parsed.kind == ParsedHttpRequest::Kind::kIncomplete) break;
    if (parsed.kind == ParsedHttpRequest::Kind::kError) {
      written += SerializeHttpReply(parsed.error_reply, 11, false);
      break;
    }
    EDL_CHECK(parsed.consumed > 0 && parsed.consumed <= bytes.size());
    bytes.remove_prefix(parsed.consumed);
    HttpReply reply = router.Handle(parsed.request);
    bool keep_alive = parsed.request.keep_alive && !reply.close;
    written += SerializeHttpReply(reply, parsed.request.version, keep_alive);
    if (!keep_alive) break;
  }
  return written;
}

}  // namespace edl::net
