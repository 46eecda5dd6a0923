// Victim selection for priority preemption, as kube-scheduler's
// DefaultPreemption plugin does it: on each node, remove
// every lower-priority pod that is not already being deleted; if the
// preemptor then fits, give back ("reprieve") victims from the highest
// priority down while it still fits; among feasible nodes pick the one
// whose highest victim priority is lowest, then the fewest victims, then
// the first in node order. Pure functions over a snapshot.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/fakekube/server/cluster_spec.h"
#include "tests/fakekube/server/resource_list.h"

namespace edl::fakekube {

// What the scheduler knows about one pod in a pass.
struct PodInfo {
  std::string ns;
  std::string name;
  std::string uid;
  std::string node;       // spec.nodeName, "" when unbound
  std::string nominated;  // status.nominatedNodeName
  std::string created;    // metadata.creationTimestamp (RFC 3339)
  uint64_t seen = 0;      // order in which the scheduler first saw it
  int64_t priority = 0;
  bool deleting = false;
  bool never_preempt = false;  // spec.preemptionPolicy Never
  ResourceList requests;
  nlohmann::json node_selector = nlohmann::json::object();
};

// Whether node's labels satisfy the pod's spec.nodeSelector.
bool NodeSelectorMatches(const PodInfo& pod, const NodeSpec& node);

struct PreemptionPlan {
  std::string node;
  std::vector<PodInfo> victims;  // lowest priority first
};

// `bound[node]`: the non-terminal pods bound to each node; `used[node]`:
// what is reserved there (those pods, deleting ones included, plus
// nominated reservations). nullopt when no node works.
std::optional<PreemptionPlan> PlanPreemption(
    const PodInfo& preemptor, const std::vector<NodeSpec>& nodes,
    const std::map<std::string, std::vector<PodInfo>>& bound,
    const std::map<std::string, ResourceList>& used);

}  // namespace edl::fakekube
