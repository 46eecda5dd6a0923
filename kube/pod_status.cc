#include "kube/pod_status.h"

#include "kube/json_path.h"

namespace edl::kube {
namespace {

using Json = nlohmann::json;

// The condition of `type` with status "True", or nullptr.
const Json* TrueCondition(const Json& pod, const std::string& type) {
  const Json* conditions = FindAt(pod, {"status", "conditions"});
  if (!conditions || !conditions->is_array()) return nullptr;
  for (const Json& c : *conditions) {
    if (c.is_object() && c.value("type", "") == type && c.value("status", "") == "True") return &c;
  }
  return nullptr;
}

// The first container's terminated state, or nullptr.
const Json* Terminated(const Json& pod) {
  const Json* statuses = FindAt(pod, {"status", "containerStatuses"});
  if (!statuses || !statuses->is_array() || statuses->empty()) return nullptr;
  const Json* t = FindAt((*statuses)[0], {"state", "terminated"});
  return t && t->is_object() ? t : nullptr;
}

}  // namespace

const char* PodFateName(PodFate::Kind kind) {
  switch (kind) {
    case PodFate::Kind::kAlive: return "alive";
    case PodFate::Kind::kCompleted: return "completed";
    case PodFate::Kind::kDisrupted: return "disrupted";
    case PodFate::Kind::kOomKilled: return "OOMKilled";
    case PodFate::Kind::kKilled: return "killed";
    case PodFate::Kind::kFailed: return "failed";
    case PodFate::Kind::kGone: return "gone";
  }
  return "?";
}

PodFate ClassifyPod(const Json& pod, bool deleted, bool deleted_by_us) {
  PodFate fate;
  const std::string phase = StringAt(pod, {"status", "phase"});
  const bool has_deletion = !StringAt(pod, {"metadata", "deletionTimestamp"}).empty();
  const Json* terminated = Terminated(pod);
  if (terminated) {
    const Json* code = FindAt(*terminated, {"exitCode"});
    if (code && code->is_number_integer()) fate.exit_code = code->get<int>();
  }
  const bool terminal = phase == "Succeeded" || phase == "Failed";
  if (!terminal && !deleted) {
    fate.kind = PodFate::Kind::kAlive;
    fate.terminating = has_deletion;
    return fate;
  }
  // 1. A disruption condition says it all (GA since 1.31).
  if (const Json* c = TrueCondition(pod, "DisruptionTarget")) {
    fate.kind = PodFate::Kind::kDisrupted;
    const std::string reason = c->value("reason", "");
    const std::string what = reason == "PreemptionByScheduler" ? "preempted by the scheduler"
                             : reason == "EvictionByEvictionAPI"
                                 ? "evicted through the Eviction API"
                             : reason == "DeletionByTaintManager" ? "deleted by the taint manager"
                             : reason == "DeletionByPodGC" ? "deleted by the pod GC (node gone)"
                             : reason == "TerminationByKubelet" ? "terminated by the kubelet"
                                                                : "disrupted";
    fate.detail = what + (reason.empty() ? "" : " (" + reason + ")");
    return fate;
  }
  // 2. Kubelet-level terminations that leave the pod object behind.
  const std::string reason = StringAt(pod, {"status", "reason"});
  if (reason == "Evicted" || reason == "Preempting" || reason == "Terminated" ||
      reason == "NodeShutdown" || reason == "NodeLost") {
    fate.kind = PodFate::Kind::kDisrupted;
    const std::string message = StringAt(pod, {"status", "message"});
    fate.detail = reason + (message.empty() ? "" : ": " + message);
    return fate;
  }
  // 3. Out of memory.
  if (terminated && terminated->value("reason", "") == "OOMKilled") {
    fate.kind = PodFate::Kind::kOomKilled;
    fate.detail = "OOMKilled (exit code " + std::to_string(fate.exit_code) + ")";
    return fate;
  }
  // 4. Deleted by someone else (kubectl delete, a drain without the
  // condition): the cluster took it away, whatever the exit code.
  if (has_deletion && !deleted_by_us) {
    fate.kind = PodFate::Kind::kDisrupted;
    fate.detail = "deleted by someone else" +
                  (fate.exit_code >= 0 ? " (exit code " + std::to_string(fate.exit_code) + ")"
                                       : std::string());
    return fate;
  }
  if (fate.exit_code < 0) {
    if (phase == "Succeeded") {
      fate.kind = PodFate::Kind::kCompleted;
      fate.exit_code = 0;
      return fate;
    }
    // 6. Deleted (or failed) with no terminal container state seen.
    fate.kind = deleted && !deleted_by_us ? PodFate::Kind::kGone : PodFate::Kind::kFailed;
    fate.detail = deleted ? "deleted before its container ended" : "failed: " + reason;
    if (!deleted && phase == "Failed") {
      fate.kind = PodFate::Kind::kFailed;
      const std::string message = StringAt(pod, {"status", "message"});
      fate.detail = "failed" + (reason.empty() ? "" : ": " + reason) +
                    (message.empty() ? "" : " (" + message + ")");
    }
    return fate;
  }
  const std::string treason = terminated ? terminated->value("reason", "") : "";
  const std::string suffix = treason.empty() ? "" : " (" + treason + ")";
  if (fate.exit_code == 0) {
    fate.kind = PodFate::Kind::kCompleted;
  } else if (fate.exit_code >= 128) {
    fate.kind = PodFate::Kind::kKilled;
    fate.detail = "killed by signal " + std::to_string(fate.exit_code - 128) + suffix;
  } else {
    fate.kind = PodFate::Kind::kFailed;
    fate.detail = "exit code " + std::to_string(fate.exit_code) + suffix;
  }
  return fate;
}

std::string UnschedulableMessage(const Json& pod) {
  const Json* conditions = FindAt(pod, {"status", "conditions"});
  if (!conditions || !conditions->is_array()) return "";
  for (const Json& c : *conditions) {
    if (c.is_object() && c.value("type", "") == "PodScheduled" &&
        c.value("status", "") == "False") {
      return c.value("message", c.value("reason", "unschedulable"));
    }
  }
  return "";
}

}  // namespace edl::kube
