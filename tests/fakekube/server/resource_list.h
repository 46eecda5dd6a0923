// ResourceList: amounts of named resources ("cpu", "memory",
// "nvidia.com/gpu", ...) in milli-units, and the arithmetic the fake
// scheduler does with them: what a pod requests, what a node has left.
// Values, no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::fakekube {

using ResourceList = std::map<std::string, int64_t>;  // name → milli-units

// Parses a requests/limits object ({"cpu":"500m","memory":"1Gi"}; numbers
// are accepted too). InvalidArgument names the resource.
Result<ResourceList> ParseResourceList(const nlohmann::json& object);

// What the scheduler reserves for a pod: per resource, the sum over its
// containers of resources.requests, falling back to resources.limits where a
// container gives a limit but no request (the API server's defaulting),
// and at least the largest init container's. InvalidArgument names the
// container and resource of a malformed quantity.
Result<ResourceList> PodRequests(const nlohmann::json& pod);

// A container's memory limit in bytes, or 0 when it has none.
int64_t MemoryLimitBytes(const nlohmann::json& container);

void AddTo(ResourceList& total, const ResourceList& more);
void SubtractFrom(ResourceList& total, const ResourceList& less);

// The resources of `request` (with a non-zero amount) for which
// used + request exceeds capacity (a resource the node does not list has
// capacity 0), in name order.
std::vector<std::string> Insufficient(const ResourceList& used, const ResourceList& request,
                                      const ResourceList& capacity);

}  // namespace edl::fakekube
