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

namespace edl::fakekube {
namespace {

constexpr auto kIdleTimeout = std::chrono::minutes(5);  // between requests
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr size_t kMaxRequestBody = size_t{3} << 20;  // etcd's request limit

bool Authorized(std::string_view header, const std::string& token) {
  if (token.empty()) return true;
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  size_t space = header.find(' ');
  if (space == std::string_view::npos) return false;
  std::string scheme(header.substr(0, space));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  std::string_view rest = header.substr(space + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  return scheme == "bearer" && rest == token;
}

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

template <class Stream>
asio::awaitable<bool> ApiServer::Impl::Dispatch(Stream& stream,
                                                http::request<http::string_body>& req) {
  const unsigned version = req.version();
  const bool keep_alive = req.keep_alive();
  ApiRequest request{std::string(req.method_string()), std::string(req.target()),
                     std::string(req[http::field::content_type]), std::move(req.body())};
  const ParsedTarget target = ParseTarget(request.target);
  if (!Authorized(req[http::field::authorization], options.token)) {
    co_return co_await WriteResponse(stream, version, keep_alive,
                                     ErrorResponse(UnauthorizedError()));
  }
  if (target.path.rfind("/debug/fakekube/", 0) == 0) {
    co_return co_await WriteResponse(stream, version, keep_alive, Control(request, target));
  }
  if (std::optional<ApiResponse> fault = faults.Next()) {
    co_return co_await WriteResponse(stream, version, keep_alive, std::move(*fault));
  }
  if (auto doc = DiscoveryDocument(target.path, "127.0.0.1:" + std::to_string(port.load()))) {
    if (request.method != "GET") {
      co_return co_await WriteResponse(stream, version, keep_alive,
                                       ErrorResponse(MethodNotAllowedError()));
    }
    co_return co_await WriteResponse(stream, version, keep_alive, JsonResponse(200, *doc));
  }
  if (target.path == "/healthz" || target.path == "/livez" || target.path == "/readyz") {
    co_return co_await WriteResponse(stream, version, keep_alive,
                                     ApiResponse{200, "text/plain; charset=utf-8", "ok", {}});
  }
  std::optional<ResourcePath> path = ParseResourcePath(target);
  if (!path) {
    co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(PathNotFound()));
  }
  if (request.method == "GET" && IsWatch(target, *path)) {
    auto plan = PlanWatch(target, *path, options.default_watch_timeout);
    if (!plan.ok()) {
      co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(plan.error));
    }
    co_return co_await Watch(stream, version, keep_alive, *plan.value, *path->resource);
  }
  if (path->subresource == "log" && request.method == "GET" && QueryBool(target, "follow")) {
    co_return co_await FollowLog(stream, version, keep_alive, target, *path);
  }
  if (path->subresource == "proxy") {
    ApiResponse response = ErrorResponse(MethodNotAllowedError());
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
    }
    co_return co_await WriteResponse(stream, version, keep_alive, std::move(response));
  }
  co_return co_await WriteResponse(stream, version, keep_alive,
                                   HandleResourceRequest(store, request, target, *path));
}

}  // namespace edl::fakekube
