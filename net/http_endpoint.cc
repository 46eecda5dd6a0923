#include "net/http_endpoint.h"

#include <boost/asio/ip/address.hpp>

namespace edl::net {
namespace {

bool IsIpLiteral(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

Endpoint PlainEndpoint(const std::string& host, int port) {
  Endpoint e;
  e.tls = false;
  e.host = host;
  e.port = std::to_string(port);
  const bool v6 = host.find(':') != std::string::npos;
  e.host_header = (v6 ? "[" + host + "]" : host) + ":" + e.port;
  e.verify_name = host;
  return e;
}

Result<Endpoint> ParseServer(const std::string& server, const std::string& tls_server_name) {
  Endpoint e;
  std::string rest;
  if (server.rfind("https://", 0) == 0) {
    e.tls = true;
    rest = server.substr(8);
  } else if (server.rfind("http://", 0) == 0) {
    e.tls = false;
    rest = server.substr(7);
  } else {
    return InvalidArgument("server \"" + server + "\" must start with https:// or http://");
  }
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) {
    e.path_prefix = rest.substr(slash);
    while (!e.path_prefix.empty() && e.path_prefix.back() == '/') {
      e.path_prefix.pop_back();
    }
  }
  if (authority.empty()) {
    return InvalidArgument("server \"" + server + "\" has no host");
  }
  e.host_header = authority;
  std::string port_text;
  if (authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) {
      return InvalidArgument("server \"" + server + "\": unterminated IPv6 address");
    }
    e.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return InvalidArgument("server \"" + server + "\": junk after the IPv6 address");
      }
      port_text = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    if (colon != std::string::npos && authority.find(':') != colon) {  // bare IPv6
      return InvalidArgument("server \"" + server + "\": write an IPv6 host in brackets");
    }
    e.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (port_text.empty()) port_text = e.tls ? "443" : "80";
  if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5 ||
      std::stoi(port_text) > 65535 || e.host.empty()) {
    return InvalidArgument("server \"" + server + "\": bad host or port");
  }
  e.port = port_text;
  e.verify_name = tls_server_name.empty() ? e.host : tls_server_name;
  e.send_sni = !IsIpLiteral(e.verify_name);
  return e;
}

}  // namespace edl::net
