// Forwarding proxied requests (see proxy.h).
#include "tests/fakekube/server/proxy.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <vector>

#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kProxyTimeout = std::chrono::seconds(30);

auto Redirect(beast::error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

// kube-apiserver consumes the client's Authorization, and a connection's
// own headers stay with it.
bool Forwarded(const std::string& name) {
  switch (http::string_to_field(name)) {
    case http::field::authorization:
    case http::field::host:
    case http::field::connection:
    case http::field::content_length:
    case http::field::transfer_encoding:
    case http::field::keep_alive:
    case http::field::upgrade:
    case http::field::proxy_authorization: return false;
    default: return true;
  }
}

}  // namespace

asio::awaitable<ApiResponse> Proxy(Store& store, const ApiServer::ProxyTarget& resolve,
                                   const ProxiedRequest& request, const ParsedTarget& target,
                                   const ResourcePath& path) {
  // NAME, NAME:PORT or SCHEME:NAME:PORT.
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t colon = path.name.find(':', start);
    parts.push_back(path.name.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() == 3) parts.erase(parts.begin());
  const std::string name = parts[0];
  const std::string port_text = parts.size() > 1 ? parts[1] : "";
  auto object = store.Get(path.resource->name, path.ns, name);
  if (!object.ok()) co_return ErrorResponse(object.error);
  const Json& obj = *object.value;
  int port = 0;
  if (!port_text.empty() && port_text.find_first_not_of("0123456789") == std::string::npos) {
    port = std::stoi(port_text.substr(0, 5));
  } else if (path.resource->name == "services") {
    for (const Json& p : obj["spec"].value("ports", Json::array())) {
      if (port_text.empty() || p.value("name", "") == port_text) {
        port = p.value("port", 0);
        break;
      }
    }
  } else {
    for (const Json& c : obj["spec"].value("containers", Json::array())) {
      for (const Json& p : c.value("ports", Json::array())) {
        if (port == 0 && (port_text.empty() || p.value("name", "") == port_text)) {
          port = p.value("containerPort", 0);
        }
      }
    }
    if (port == 0 && port_text.empty()) port = 80;
  }
  std::optional<std::string> address;
  if (resolve && port > 0) address = resolve(obj, port);
  if (!address) {
    co_return ErrorResponse(
        ServiceUnavailableError("no endpoints available for service \"" + name + "\""));
  }
  const size_t colon = address->rfind(':');
  const std::string host = address->substr(0, colon);
  const std::string target_port = colon == std::string::npos ? "80" : address->substr(colon + 1);
  auto unreachable = [&](const beast::error_code& ec) {
    return ErrorResponse(ServiceUnavailableError("error trying to reach service: dial tcp " +
                                                 *address + ": " + ec.message()));
  };
  beast::error_code ec;
  tcp::resolver resolver(co_await asio::this_coro::executor);
  auto endpoints = co_await resolver.async_resolve(host, target_port, Redirect(ec));
  if (ec) co_return unreachable(ec);
  beast::tcp_stream upstream(co_await asio::this_coro::executor);
  upstream.expires_after(kProxyTimeout);
  co_await upstream.async_connect(endpoints, Redirect(ec));
  if (ec) co_return unreachable(ec);
  std::string forward = path.proxy_path;
  if (!target.raw_query.empty()) forward += "?" + target.raw_query;
  http::request<http::string_body> req{
      request.method == "POST" ? http::verb::post : http::verb::get, forward, 11};
  for (const auto& [name, value] : request.headers) {
    if (Forwarded(name)) req.set(name, value);
  }
  req.set(http::field::host, *address);
  req.set(http::field::connection, "close");
  if (request.method == "POST") {
    req.body() = request.body;
    req.prepare_payload();
  }
  co_await http::async_write(upstream, req, Redirect(ec));
  if (ec) co_return unreachable(ec);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(size_t{64} << 20);
  co_await http::async_read(upstream, buffer, parser, Redirect(ec));
  if (ec) co_return unreachable(ec);
  auto res = parser.release();
  std::string type(res[http::field::content_type]);
  co_return ApiResponse{static_cast<int>(res.result_int()),
                        type.empty() ? "text/plain; charset=utf-8" : type,
                        std::move(res.body()),
                        {}};
}

}  // namespace edl::fakekube
