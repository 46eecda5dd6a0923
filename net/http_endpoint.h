// Where an HTTP client connects (net/http_connection.h): a server's host,
// port, scheme and the names TLS verifies, parsed from a URL such as a
// kubeconfig's server, or made for a plain "host:port".
#pragma once

#include <string>

#include "base/status.h"

namespace edl::net {

// A server's address (for the API server, parsed from its URL).
struct Endpoint {
  bool tls = true;
  std::string host;         // without IPv6 brackets
  std::string port;         // "6443"
  std::string host_header;  // "host:port" as the URL writes it
  std::string path_prefix;  // "" or "/prefix" (no trailing '/')
  std::string verify_name;  // tls_server_name, else host
  bool send_sni = false;    // verify_name is a DNS name (RFC 6066: no IP SNI)
  std::string user_agent = "edl";
};

// A plain endpoint "host:port".
Endpoint PlainEndpoint(const std::string& host, int port);

// "https://[::1]:6443/prefix/" → Endpoint. InvalidArgument naming `server`.
Result<Endpoint> ParseServer(const std::string& server, const std::string& tls_server_name);

}  // namespace edl::net
