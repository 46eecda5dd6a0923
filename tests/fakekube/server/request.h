// An API request with its target taken apart the way kube-apiserver's
// request-info resolver does it: API group and version, namespace,
// resource, name, subresource (plus the rest of a proxy path), and the
// query with apimachinery's parsing of booleans. Socket-free.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "tests/fakekube/server/resources.h"

namespace edl::fakekube {

struct ApiRequest {
  std::string method;        // "GET"
  std::string target;        // "/api/v1/namespaces/x/pods?watch=1"
  std::string content_type;  // of the body
  std::string body;
};

// The path and the decoded query of a target.
struct ParsedTarget {
  std::string path;                          // percent-decoded
  std::string raw_path;                      // as sent
  std::string raw_query;                     // after '?', as sent
  std::map<std::string, std::string> query;  // first value of each parameter
};
ParsedTarget ParseTarget(const std::string& target);

// apimachinery's Convert_Slice_string_To_bool: only "0" and "false" (any
// case) are false; anything else, the empty value included, is true.
bool QueryBool(const ParsedTarget& target, const std::string& name);
// An integer parameter, or nullopt when absent or not an integer.
std::optional<int64_t> QueryInt(const ParsedTarget& target, const std::string& name);
std::string QueryString(const ParsedTarget& target, const std::string& name);

// Where a resource path points.
struct ResourcePath {
  const ResourceInfo* resource = nullptr;
  std::string ns;           // "" for cluster-scoped or an all-namespaces list
  std::string name;         // "" for the collection
  std::string subresource;  // "", "status", "log", "proxy"
  std::string proxy_path;   // after ".../proxy", with its leading '/', as sent
};
// Resolves /api/v1/... and /apis/GROUP/VERSION/... paths; nullopt when the
// path names no served resource (404).
std::optional<ResourcePath> ParseResourcePath(const ParsedTarget& target);

}  // namespace edl::fakekube
