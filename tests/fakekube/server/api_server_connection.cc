// ApiServer's connections (api_server_impl.h): accepting, TLS, reading
// requests and dispatching them. Requests that answer at once go to
// api_handlers.cc and proxied ones to proxy.cc; watches and followed logs
// to api_server_streams.cc.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <string>

#include "base/logging.h"
#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/api_server_impl.h"
#include "tests/fakekube/server/discovery.h"
#include "tests/fakekube/server/proxy.h"
#include "tests/fakekube/server/rbac_authorizer.h"

namespace edl::fakekube {
namespace {

constexpr auto kIdleTimeout = std::chrono::minutes(5);  // between requests
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr size_t kMaxRequestBody = size_t{3} << 20;  // etcd's request limit

}  // namespace

asio::awaitable<void> ApiServer::Impl::AcceptLoop() {
  for (;;) {
    beast::error_code ec;
    tcp::socket socket(asio::make_strand(*ioc));
    co_await acceptor->async_accept(socket, Redirect(ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
      co_await pause.async_wait(Redirect(ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    if (tls) {
      asio::co_spawn(executor, ServeTls(std::move(socket)), LogEscapedException);
    } else {
      asio::co_spawn(executor, ServePlain(std::move(socket)), LogEscapedException);
    }
  }
}

asio::awaitable<void> ApiServer::Impl::ServeTls(tcp::socket socket) {
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(kHandshakeTimeout);
  co_await stream.async_handshake(ssl::stream_base::server, Redirect(ec));
  if (ec) co_return;
  co_await Serve(stream);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(1));
  co_await stream.async_shutdown(Redirect(ec));
  beast::get_lowest_layer(stream).socket().close(ec);
}

asio::awaitable<void> ApiServer::Impl::ServePlain(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  co_await Serve(stream);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream.socket().close(ec);
}

template <class Stream>
asio::awaitable<void> ApiServer::Impl::Serve(Stream& stream) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxRequestBody);
    parser.header_limit(64 * 1024);
    beast::get_lowest_layer(stream).expires_after(kIdleTimeout);
    beast::error_code ec;
    co_await http::async_read(stream, buffer, parser, Redirect(ec));
    if (ec) {
      if (ec == http::error::body_limit) {
        (void)co_await WriteResponse(
            stream, 11, false,
            ErrorResponse(ApiError{413, "RequestEntityTooLarge", "Request entity too large",
                                   Json::object()}));
      } else if (ec.category() == http::make_error_code(http::error::need_more).category() &&
                 ec != http::error::end_of_stream && ec != http::error::partial_message) {
        (void)co_await WriteResponse(stream, 11, false,
                                     ErrorResponse(BadRequest("malformed HTTP request")));
      }
      co_return;
    }
    http::request<http::string_body> req = parser.release();
    if (!co_await Dispatch(stream, req)) co_return;
  }
}

std::optional<ApiError> ApiServer::Impl::Refusal(const UserInfo& user,
                                                 const RequestAttributes& request) const {
  if (!options.rbac) return std::nullopt;
  return AuthorizeRbac(store, user, request);
}

// In kube-apiserver's order: authentication, then the test hooks (the
// admin's; not audited), then the injected faults (where priority and
// fairness answers 429), then authorization, then the handler. Each answer
// is decided before the one co_await that writes it (an earlier form that
// awaited a helper coroutine from a lambda, with conditional temporaries,
// freed an ApiResponse twice under GCC 12 when the server stopped).
template <class Stream>
asio::awaitable<bool> ApiServer::Impl::Dispatch(Stream& stream,
                                                http::request<http::string_body>& req) {
  const unsigned version = req.version();
  const bool keep_alive = req.keep_alive();
  ApiRequest request{std::string(req.method_string()), std::string(req.target()),
                     std::string(req[http::field::content_type]), std::move(req.body())};
  const ParsedTarget target = ParseTarget(request.target);
  AuditEvent audit_event;
  audit_event.request_uri = request.target;
  audit_event.user_agent = std::string(req[http::field::user_agent]);
  audit_event.request = ResolveRequest(request.method, target);
  bool audited = true;
  std::optional<ApiResponse> response;  // once decided
  const std::optional<UserInfo> user = Authenticate(req[http::field::authorization], credentials);
  if (!user) {
    response = ErrorResponse(UnauthorizedError());
  } else {
    audit_event.user = *user;
    if (target.path.rfind("/debug/fakekube/", 0) == 0) {
      audited = false;
      if (std::optional<ApiError> refused = Refusal(*user, audit_event.request)) {
        response = ErrorResponse(*refused);
      } else {
        response = Control(request, target);
      }
    } else if (std::optional<ApiResponse> fault = faults.Next()) {
      response = std::move(fault);
    } else if (std::optional<ApiError> refused = Refusal(*user, audit_event.request)) {
      response = ErrorResponse(*refused);
    } else if (auto doc =
                   DiscoveryDocument(target.path, "127.0.0.1:" + std::to_string(port.load()))) {
      if (request.method != "GET") {
        response = ErrorResponse(MethodNotAllowedError());
      } else {
        response = JsonResponse(200, *doc);
      }
    } else if (target.path == "/healthz" || target.path == "/livez" || target.path == "/readyz") {
      response = ApiResponse{200, "text/plain; charset=utf-8", "ok", {}};
    }
  }
  std::optional<ResourcePath> path;
  if (!response) {
    path = ParseResourcePath(target);
    if (!path) response = ErrorResponse(PathNotFound());
  }
  if (!response && request.method == "GET" && IsWatch(target, *path)) {
    auto plan = PlanWatch(target, *path, options.default_watch_timeout);
    if (!plan.ok()) {
      response = ErrorResponse(plan.error);
    } else {
      audit_event.code = 200;
      audit.Record(audit_event);
      co_return co_await Watch(stream, version, keep_alive, *plan.value, *path->resource);
    }
  }
  if (!response && path->subresource == "log" && request.method == "GET" &&
      QueryBool(target, "follow")) {
    co_return co_await FollowLog(stream, version, keep_alive, target, *path, audit_event);
  }
  if (!response && path->subresource == "proxy") {
    if (request.method == "GET" || request.method == "POST") {
      ProxyTarget resolve;
      {
        std::lock_guard<std::mutex> lock(control_mu);
        resolve = proxy_target;
      }
      ProxiedRequest proxied{request.method, request.body, {}};
      for (const auto& field : req) {
        proxied.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      response = co_await Proxy(store, resolve, proxied, target, *path);
    } else {
      response = ErrorResponse(MethodNotAllowedError());
    }
  }
  if (!response) response = HandleResourceRequest(store, request, target, *path);
  audit_event.code = response->status;
  if (audited) audit.Record(audit_event);
  co_return co_await WriteResponse(stream, version, keep_alive, std::move(*response));
}

}  // namespace edl::fakekube
