// ClusterSpec: the fake cluster's nodes and their capacity, parsed from the
// edl-fake-kube flag
//   --nodes "node-a:cpu=4,memory=8Gi,nvidia.com/gpu=1;node-b:cpu=2,memory=4Gi"
// and rendered as v1 Node objects. Values, no shared state.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "tests/fakekube/server/resource_list.h"

namespace edl::fakekube {

struct NodeSpec {
  std::string name;
  ResourceList capacity;  // milli-units
};

// Nodes separated by ';' (a trailing ';' is allowed), each
// `NAME:RESOURCE=QUANTITY[,RESOURCE=QUANTITY...]`. Names are DNS-1123
// labels and unique; resource names are `cpu`, `memory`, or
// `[prefix/]name` in lower case; each resource appears once. Errors are
// InvalidArgument naming the node and field: `--nodes: node "node-a":
// field "cpu": quantity "4x": ...`.
Result<std::vector<NodeSpec>> ParseNodeSpecs(const std::string& text);

// One node "node-0" with cpu=8, memory=32Gi.
std::vector<NodeSpec> DefaultNodeSpecs();

// The v1 Node object (metadata.name, labels kubernetes.io/hostname,
// status.capacity/allocatable, a Ready condition, addresses with
// InternalIP host_ip), as created in the store at start.
nlohmann::json NodeObject(const NodeSpec& node, const std::string& host_ip);

}  // namespace edl::fakekube
