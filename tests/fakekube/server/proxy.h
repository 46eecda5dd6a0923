// The API server's proxy subresource, services/NAME[:PORT]/proxy/PATH and
// pods/NAME[:PORT]/proxy/PATH: resolves the port (number, port name or the
// first port), asks the ProxyTarget where that goes, forwards the GET over
// plain HTTP and relays status, content type and body. 503 when there is
// no target or it cannot be reached, as kube-apiserver words it.
// Private to api_server.cc (it brings in Asio).
#pragma once

#include <boost/asio/awaitable.hpp>

#include "tests/fakekube/server/api_handlers.h"
#include "tests/fakekube/server/api_server.h"
#include "tests/fakekube/server/request.h"

namespace edl::fakekube {

// REQUIRES: path.subresource == "proxy". Runs on the caller's executor.
boost::asio::awaitable<ApiResponse> ProxyGet(Store& store, const ApiServer::ProxyTarget& resolve,
                                             const ParsedTarget& target,
                                             const ResourcePath& path);

}  // namespace edl::fakekube
