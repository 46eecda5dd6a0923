// The fixed documents a kube-apiserver serves about itself: /version,
// legacy discovery (/api, /apis, /api/v1, /apis/GROUP[/VERSION]) and the
// OpenAPI v3 index and per-group documents that make kubectl use
// server-side field validation.
#pragma once

#include <optional>
#include <string>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

// The document served at `path` ("/version", "/api/v1", "/openapi/v3", ...),
// or nullopt if `path` is not a discovery path. `server_address` is
// "host:port" for /api's serverAddressByClientCIDRs.
std::optional<Json> DiscoveryDocument(const std::string& path, const std::string& server_address);

}  // namespace edl::fakekube
