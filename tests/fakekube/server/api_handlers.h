// The request/response half of the fake API server: create, get, list,
// update, patch and delete on resource paths (and their status
// subresource), pods/log without follow, and the parsing of watch requests,
// all on top of Store. Socket-free; api_server.cc does the I/O and the
// streaming.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/fakekube/server/request.h"
#include "tests/fakekube/server/store.h"
#include "tests/fakekube/server/watch_filter.h"

namespace edl::fakekube {

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

ApiResponse JsonResponse(int status, const Json& body);
ApiResponse ErrorResponse(const ApiError& error);

// Answers a non-streaming request to `path`.
ApiResponse HandleResourceRequest(Store& store, const ApiRequest& request,
                                  const ParsedTarget& target, const ResourcePath& path);

// A parsed watch request.
struct WatchPlan {
  std::shared_ptr<const WatchFilter> filter;
  std::string ns;
  // nullopt: start with synthetic ADDED events for what exists (no
  // resourceVersion, or "0"); else replay the changes after this version.
  std::optional<uint64_t> since;
  std::chrono::seconds timeout{1800};
  bool bookmarks = false;
};
// Whether a GET on `path` is a watch (watch=1|true|True|"" ...).
bool IsWatch(const ParsedTarget& target, const ResourcePath& path);
// 400 for bad selectors or resourceVersion.
ApiResult<WatchPlan> PlanWatch(const ParsedTarget& target, const ResourcePath& path,
                               std::chrono::seconds default_timeout);

}  // namespace edl::fakekube
