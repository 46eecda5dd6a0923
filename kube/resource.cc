// The built-in Resources and how they become URL paths.
#include "kube/client.h"

namespace edl::kube {

Resource Pods() { return Resource{"", "v1", "pods", true}; }
Resource Services() { return Resource{"", "v1", "services", true}; }
Resource ConfigMaps() { return Resource{"", "v1", "configmaps", true}; }
Resource Secrets() { return Resource{"", "v1", "secrets", true}; }
Resource Jobs() { return Resource{"batch", "v1", "jobs", true}; }
Resource PriorityClasses() { return Resource{"scheduling.k8s.io", "v1", "priorityclasses", false}; }

std::string CollectionPath(const Resource& r, const std::string& ns) {
  std::string path = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !ns.empty()) path += "/namespaces/" + ns;
  return path + "/" + r.plural;
}

}  // namespace edl::kube
