// The resource table (see resources.h).
#include "tests/fakekube/server/resources.h"

namespace edl::fakekube {

const std::vector<ResourceInfo>& AllResources() {
  static const std::vector<ResourceInfo> kResources = {
      {"pods", "pod", "Pod", "", "v1", true, {"po"}, {"status", "log", "proxy"}},
      {"services", "service", "Service", "", "v1", true, {"svc"}, {"status", "proxy"}},
      {"configmaps", "configmap", "ConfigMap", "", "v1", true, {"cm"}, {}},
      {"secrets", "secret", "Secret", "", "v1", true, {}, {}},
      {"events", "event", "Event", "", "v1", true, {"ev"}, {}},
      {"nodes", "node", "Node", "", "v1", false, {"no"}, {"status", "proxy"}},
      {"namespaces", "namespace", "Namespace", "", "v1", false, {"ns"}, {"status"}},
      {"priorityclasses",
       "priorityclass",
       "PriorityClass",
       "scheduling.k8s.io",
       "v1",
       false,
       {"pc"},
       {}},
      {"jobs", "job", "Job", "batch", "v1", true, {}, {"status"}},
      {"serviceaccounts", "serviceaccount", "ServiceAccount", "", "v1", true, {"sa"}, {}},
      {"roles", "role", "Role", "rbac.authorization.k8s.io", "v1", true, {}, {}},
      {"rolebindings",
       "rolebinding",
       "RoleBinding",
       "rbac.authorization.k8s.io",
       "v1",
       true,
       {},
       {}},
  };
  return kResources;
}

const ResourceInfo* FindResource(const std::string& group, const std::string& name) {
  for (const ResourceInfo& r : AllResources()) {
    if (r.group == group && r.name == name) return &r;
  }
  return nullptr;
}

const ResourceInfo* FindResource(const std::string& name) {
  for (const ResourceInfo& r : AllResources()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

}  // namespace edl::fakekube
