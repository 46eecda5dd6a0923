// Scheduler: one pass lists every pod, accounts what each node has bound,
// and places pending pods highest priority first.
#include "tests/fakekube/server/scheduler.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "base/logging.h"
#include "tests/fakekube/server/pod_conditions.h"

namespace edl::fakekube {
namespace {

constexpr char kPreemptionMessage[] =
    "default-scheduler: preempting to accommodate a higher priority pod";

std::string Str(const Json& object, const char* a, const char* b) {
  if (!object.contains(a) || !object[a].is_object() || !object[a].contains(b) ||
      !object[a][b].is_string()) {
    return "";
  }
  return object[a][b].get<std::string>();
}

// "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."
std::string NodesAvailable(size_t nodes, const std::map<std::string, int>& reasons) {
  std::string out = "0/" + std::to_string(nodes) + " nodes are available";
  std::string sep = ": ";
  for (const auto& [reason, count] : reasons) {
    out += sep + std::to_string(count) + " " + reason;
    sep = ", ";
  }
  return out + ".";
}

}  // namespace

Scheduler::Scheduler(Store& store, Options options)
    : store_(store),
      options_(std::move(options)),
      // The periodic pass is only a safety net; events drive scheduling.
      loop_(
          store,
          {.name = "Scheduler", .resources = {"pods", "nodes"}, .resync = std::chrono::seconds(5)},
          [this] { RunOnce(); }) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() { loop_.Start(); }

void Scheduler::Stop() { loop_.Stop(); }

std::optional<PodInfo> Scheduler::Describe(const Json& pod) {
  PodInfo info;
  info.ns = Str(pod, "metadata", "namespace");
  info.name = Str(pod, "metadata", "name");
  info.uid = Str(pod, "metadata", "uid");
  info.created = Str(pod, "metadata", "creationTimestamp");
  info.node = Str(pod, "spec", "nodeName");
  info.nominated = Str(pod, "status", "nominatedNodeName");
  info.deleting = IsDeleting(pod);
  const Json& spec = pod.contains("spec") ? pod["spec"] : Json::object();
  if (spec.contains("priority") && spec["priority"].is_number_integer()) {
    info.priority = spec["priority"].get<int64_t>();
  }
  info.never_preempt = spec.value("preemptionPolicy", std::string()) == "Never";
  if (spec.contains("nodeSelector") && spec["nodeSelector"].is_object()) {
    info.node_selector = spec["nodeSelector"];
  }
  Result<ResourceList> requests = PodRequests(pod);
  if (!requests.ok()) {
    EDL_LOG(WARNING) << "scheduler: pod " << info.ns << "/" << info.name
                     << " ignored: " << requests.status().message();
    return std::nullopt;
  }
  info.requests = std::move(requests).value();
  auto [it, inserted] = first_seen_.emplace(info.uid, next_seen_);
  if (inserted) ++next_seen_;
  info.seen = it->second;
  return info;
}

void Scheduler::RunOnce() {
  std::lock_guard<std::mutex> pass_lock(pass_mu_);
  ApiResult<Store::ListResult> listed = store_.List("pods", "", "", "");
  if (!listed.ok()) {
    EDL_LOG(WARNING) << "scheduler: listing pods: " << listed.error.message;
    return;
  }
  std::set<std::string> known_nodes;
  for (const NodeSpec& node : options_.nodes) known_nodes.insert(node.name);
  Usage used;
  Bound bound;
  std::vector<std::pair<PodInfo, const Json*>> pending;
  std::set<std::string> live;
  for (const Json& pod : listed.value->items) {
    if (IsTerminal(pod)) continue;
    std::optional<PodInfo> info = Describe(pod);
    if (!info) continue;
    live.insert(info->uid);
    if (!info->node.empty()) {
      if (!known_nodes.count(info->node)) continue;
      AddTo(used[info->node], info->requests);
      bound[info->node].push_back(*info);
      continue;
    }
    std::string scheduler = Str(pod, "spec", "schedulerName");
    if (info->deleting || (!scheduler.empty() && scheduler != options_.scheduler_name)) {
      continue;
    }
    pending.emplace_back(std::move(*info), &pod);
  }
  for (auto it = first_seen_.begin(); it != first_seen_.end();) {
    it = live.count(it->first) ? std::next(it) : first_seen_.erase(it);
  }
  std::sort(pending.begin(), pending.end(), [](const auto& a, const auto& b) {
    if (a.first.priority != b.first.priority) return a.first.priority > b.first.priority;
    if (a.first.created != b.first.created) return a.first.created < b.first.created;
    return a.first.seen < b.first.seen;
  });
  for (const auto& [info, object] : pending) SchedulePod(info, *object, used, bound);
}

void Scheduler::SchedulePod(const PodInfo& pod, const Json& object, Usage& used, Bound& bound) {
  // The nominated node first, then the others in order.
  std::vector<const NodeSpec*> order;
  for (const NodeSpec& node : options_.nodes) {
    if (node.name == pod.nominated)
      order.insert(order.begin(), &node);
    else
      order.push_back(&node);
  }
  std::map<std::string, int> reasons;
  for (const NodeSpec* node : order) {
    if (!NodeSelectorMatches(pod, *node)) {
      ++reasons["node(s) didn't match Pod's node affinity/selector"];
      continue;
    }
    // A nominated pod's own reservation is not in `used`: it is added only
    // when the pod cannot be bound.
    std::vector<std::string> missing = Insufficient(used[node->name], pod.requests, node->capacity);
    if (missing.empty()) {
      Bind(pod, node->name);
      AddTo(used[node->name], pod.requests);
      PodInfo placed = pod;
      placed.node = node->name;
      bound[node->name].push_back(std::move(placed));
      return;
    }
    for (const std::string& resource : missing) ++reasons["Insufficient " + resource];
  }
  const std::string message = NodesAvailable(options_.nodes.size(), reasons);

  // Victims already terminating for this pod: wait for them, keeping the
  // room reserved so that lower-priority pods do not take it.
  if (!pod.nominated.empty()) {
    for (const PodInfo& other : bound[pod.nominated]) {
      if (other.deleting && other.priority < pod.priority) {
        AddTo(used[pod.nominated], pod.requests);
        return;
      }
    }
  }
  if (pod.never_preempt) {
    MarkUnschedulable(pod, object,
                      message + " preemption: not eligible due to preemptionPolicy=Never.", "");
    return;
  }
  std::optional<PreemptionPlan> plan = PlanPreemption(pod, options_.nodes, bound, used);
  if (!plan) {
    std::map<std::string, int> preemption_reasons;
    for (const NodeSpec& node : options_.nodes) {
      ++preemption_reasons[NodeSelectorMatches(pod, node)
                               ? "No preemption victims found for incoming pod"
                               : "Preemption is not helpful for scheduling"];
    }
    MarkUnschedulable(
        pod, object,
        message + " preemption: " + NodesAvailable(options_.nodes.size(), preemption_reasons), "");
    return;
  }
  for (const PodInfo& victim : plan->victims) {
    Preempt(victim, pod, plan->node);
    for (PodInfo& other : bound[plan->node]) {
      if (other.uid == victim.uid) other.deleting = true;
    }
  }
  MarkUnschedulable(pod, object, message, plan->node);
  AddTo(used[plan->node], pod.requests);
}

void Scheduler::Bind(const PodInfo& pod, const std::string& node) {
  ApiResult<Json> result = store_.Update("pods", pod.ns, pod.name, [&](Json& object) {
    if (Str(object, "metadata", "uid") != pod.uid || IsDeleting(object) ||
        !Str(object, "spec", "nodeName").empty()) {
      return;  // changed under us; the next pass looks again
    }
    object["spec"]["nodeName"] = node;
    SetPodCondition(object, "PodScheduled", "True");
    if (object.contains("status")) object["status"].erase("nominatedNodeName");
  });
  if (!result.ok()) {
    EDL_LOG(WARNING) << "scheduler: binding " << pod.ns << "/" << pod.name << " to " << node << ": "
                     << result.error.message;
    return;
  }
  EDL_LOG(INFO) << "scheduler: bound " << pod.ns << "/" << pod.name << " to " << node;
  RecordEvent(*result.value, "Scheduled", "Binding",
              "Successfully assigned " + pod.ns + "/" + pod.name + " to " + node);
}

void Scheduler::MarkUnschedulable(const PodInfo& pod, const Json& object,
                                  const std::string& message, const std::string& nominated) {
  const Json* current = FindPodCondition(object, "PodScheduled");
  if (current && current->value("status", std::string()) == "False" &&
      current->value("reason", std::string()) == "Unschedulable" &&
      current->value("message", std::string()) == message && pod.nominated == nominated) {
    return;  // already says so: no event for an unchanged status
  }
  ApiResult<Json> result = store_.Update("pods", pod.ns, pod.name, [&](Json& updated) {
    if (Str(updated, "metadata", "uid") != pod.uid || !Str(updated, "spec", "nodeName").empty()) {
      return;
    }
    SetPodCondition(updated, "PodScheduled", "False", "Unschedulable", message);
    if (nominated.empty()) {
      updated["status"].erase("nominatedNodeName");
    } else {
      updated["status"]["nominatedNodeName"] = nominated;
    }
  });
  if (!result.ok()) return;  // deleted meanwhile
  if (!current || current->value("message", std::string()) != message) {
    EDL_LOG(INFO) << "scheduler: " << pod.ns << "/" << pod.name << " unschedulable: " << message;
    RecordEvent(*result.value, "FailedScheduling", "Scheduling", message);
  }
}

void Scheduler::Preempt(const PodInfo& victim, const PodInfo& preemptor, const std::string& node) {
  EDL_LOG(INFO) << "scheduler: preempting " << victim.ns << "/" << victim.name << " on " << node
                << " for " << preemptor.ns << "/" << preemptor.name;
  ApiResult<Json> marked = store_.Update("pods", victim.ns, victim.name, [&](Json& object) {
    if (Str(object, "metadata", "uid") != victim.uid) return;
    SetPodCondition(object, "DisruptionTarget", "True", "PreemptionByScheduler",
                    kPreemptionMessage);
  });
  if (!marked.ok()) return;
  DeleteRequest request;
  request.precondition_uid = victim.uid;
  ApiResult<Json> deleted = store_.Delete("pods", victim.ns, victim.name, request);
  if (!deleted.ok()) {
    EDL_LOG(WARNING) << "scheduler: deleting victim " << victim.ns << "/" << victim.name << ": "
                     << deleted.error.message;
    return;
  }
  RecordEvent(*marked.value, "Preempted", "Preempting",
              "Preempted by pod " + preemptor.uid + " on node " + node);
}

void Scheduler::RecordEvent(const Json& pod, const std::string& reason, const std::string& action,
                            const std::string& message) {
  const std::string type = reason == "FailedScheduling" ? "Warning" : "Normal";
  Json event = PodEvent(pod, options_.scheduler_name, type, reason, action, message);
  std::string ns = event["metadata"]["namespace"];
  ApiResult<Json> created = store_.Create("events", ns, std::move(event));
  if (!created.ok()) {
    EDL_LOG(DEBUG) << "scheduler: recording event " << reason << ": " << created.error.message;
  }
}

}  // namespace edl::fakekube
