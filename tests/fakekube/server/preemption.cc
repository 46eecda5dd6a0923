// Victim selection for priority preemption.
#include "tests/fakekube/server/preemption.h"

#include <algorithm>

namespace edl::fakekube {

bool NodeSelectorMatches(const PodInfo& pod, const NodeSpec& node) {
  if (!pod.node_selector.is_object() || pod.node_selector.empty()) return true;
  nlohmann::json labels = NodeObject(node, "")["metadata"]["labels"];
  for (const auto& [key, value] : pod.node_selector.items()) {
    if (!labels.contains(key) || labels[key] != value) return false;
  }
  return true;
}

std::optional<PreemptionPlan> PlanPreemption(
    const PodInfo& preemptor, const std::vector<NodeSpec>& nodes,
    const std::map<std::string, std::vector<PodInfo>>& bound,
    const std::map<std::string, ResourceList>& used) {
  std::optional<PreemptionPlan> best;
  for (const NodeSpec& node : nodes) {
    if (!NodeSelectorMatches(preemptor, node)) continue;
    auto b = bound.find(node.name);
    auto u = used.find(node.name);
    ResourceList free_after = u == used.end() ? ResourceList{} : u->second;
    std::vector<PodInfo> candidates;
    if (b != bound.end()) {
      for (const PodInfo& pod : b->second) {
        if (pod.deleting || pod.priority >= preemptor.priority) continue;
        candidates.push_back(pod);
        SubtractFrom(free_after, pod.requests);
      }
    }
    if (candidates.empty() ||
        !Insufficient(free_after, preemptor.requests, node.capacity).empty()) {
      continue;
    }
    // Highest priority (then oldest) first: those are reprieved first.
    std::sort(candidates.begin(), candidates.end(), [](const PodInfo& a, const PodInfo& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      if (a.created != b.created) return a.created < b.created;
      return a.seen < b.seen;
    });
    PreemptionPlan plan{node.name, {}};
    for (const PodInfo& pod : candidates) {
      ResourceList with = free_after;
      AddTo(with, pod.requests);
      if (Insufficient(with, preemptor.requests, node.capacity).empty()) {
        free_after = std::move(with);  // reprieved
      } else {
        plan.victims.push_back(pod);
      }
    }
    if (plan.victims.empty()) continue;
    std::reverse(plan.victims.begin(), plan.victims.end());
    auto max_priority = [](const PreemptionPlan& p) {
      int64_t m = p.victims.front().priority;
      for (const PodInfo& v : p.victims) m = std::max(m, v.priority);
      return m;
    };
    if (!best || max_priority(plan) < max_priority(*best) ||
        (max_priority(plan) == max_priority(*best) && plan.victims.size() < best->victims.size())) {
      best = std::move(plan);
    }
  }
  return best;
}

}  // namespace edl::fakekube
