// The API server's proxy subresource, services/NAME[:PORT]/proxy/PATH and
// pods/NAME[:PORT]/proxy/PATH: resolves the port (number, port name or the
// first port), asks the ProxyTarget where that goes, forwards the GET or
// POST (body and headers, but not Authorization, which kube-apiserver
// consumes) over plain HTTP and relays status, content type and body. 503 when there is
// no target or it cannot be reached, as kube-apiserver words it.
// Private to api_server.cc (it brings in Asio).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/fakekube/server/api_handlers.h"
#include "tests/fakekube/server/api_server.h"
#include "tests/fakekube/server/request.h"

namespace edl::fakekube {

struct ProxiedRequest {
  std::string method;  // "GET" or "POST"
  std::string body;
  // The client's headers; Proxy forwards all but Authorization and the
  // connection's own (Host, Connection, Content-Length, ...).
  std::vector<std::pair<std::string, std::string>> headers;
};

// REQUIRES: path.subresource == "proxy". Runs on the caller's executor.
boost::asio::awaitable<ApiResponse> Proxy(Store& store, const ApiServer::ProxyTarget& resolve,
                                          const ProxiedRequest& request, const ParsedTarget& target,
                                          const ResourcePath& path);

}  // namespace edl::fakekube
