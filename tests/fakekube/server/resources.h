// The resources the fake serves: URL plural name, Kind, apiVersion, API
// group and scope. One table, read by the store (kind/apiVersion of stored
// objects), the router (paths) and discovery (/api/v1 etc.).
#pragma once

#include <string>
#include <vector>

namespace edl::fakekube {

struct ResourceInfo {
  std::string name;      // "pods"
  std::string singular;  // "pod"
  std::string kind;      // "Pod"
  std::string group;     // "" for core, "scheduling.k8s.io"
  std::string version;   // "v1"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> subresources;  // "status", "log", "proxy"

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  std::string list_kind() const { return kind + "List"; }
};

// Every served resource, in discovery order.
const std::vector<ResourceInfo>& AllResources();
// The resource named `name` in `group` ("" = core), or nullptr.
const ResourceInfo* FindResource(const std::string& group, const std::string& name);
// The resource by plural name in any group, or nullptr.
const ResourceInfo* FindResource(const std::string& name);

}  // namespace edl::fakekube
