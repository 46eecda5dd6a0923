// What kube-apiserver does to an object between the request and etcd on
// create, besides validation (validation.h): the Priority admission
// plugin, the registry strategies' PrepareForCreate and defaulting.
// Pure functions of the object and a view of the cluster; the store
// calls them under its lock.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/resources.h"

namespace edl::fakekube {

struct AdmissionContext {
  // The stored PriorityClass named `name`, or nullptr.
  std::function<const Json*(const std::string& name)> find_priority_class;
  // The globalDefault PriorityClass, or nullptr.
  std::function<const Json*()> default_priority_class;
  // A free ClusterIP for a new Service.
  std::function<std::string()> allocate_cluster_ip;
};

// Mutating admission (priority): may fill spec.priority etc.; 403 when the
// PriorityClass is unknown or spec.priority contradicts it. Runs before the
// name is generated, like the real plugin.
std::optional<ApiError> Admit(const ResourceInfo& resource, Json& object,
                              const AdmissionContext& context);

// The registry's defaults and PrepareForCreate (status reset, pod and
// service defaults). REQUIRES: ValidateObject (validation.h) passed.
void ApplyCreateDefaults(const ResourceInfo& resource, Json& object,
                         const AdmissionContext& context);

}  // namespace edl::fakekube
