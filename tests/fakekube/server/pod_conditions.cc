// Pod condition helpers.
#include "tests/fakekube/server/pod_conditions.h"

#include <chrono>
#include <cstdio>

namespace edl::fakekube {
namespace {

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string NowRfc3339() { return Rfc3339(WallSeconds()); }

const Json* FindPodCondition(const Json& pod, const std::string& type) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return nullptr;
  for (const Json& c : pod["status"]["conditions"]) {
    if (c.value("type", std::string()) == type) return &c;
  }
  return nullptr;
}

void SetPodCondition(Json& pod, const std::string& type, const std::string& status,
                     const std::string& reason, const std::string& message) {
  Json condition = {{"type", type}, {"status", status}, {"lastProbeTime", nullptr}};
  if (!reason.empty()) condition["reason"] = reason;
  if (!message.empty()) condition["message"] = message;
  Json& conditions = pod["status"]["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  for (Json& c : conditions) {
    if (c.value("type", std::string()) != type) continue;
    condition["lastTransitionTime"] =
        c.value("status", std::string()) == status && c.contains("lastTransitionTime")
            ? c["lastTransitionTime"]
            : Json(NowRfc3339());
    c = std::move(condition);
    return;
  }
  condition["lastTransitionTime"] = NowRfc3339();
  conditions.push_back(std::move(condition));
}

bool IsDeleting(const Json& pod) {
  return pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp") &&
         !pod["metadata"]["deletionTimestamp"].is_null();
}

std::string PodPhase(const Json& pod) {
  if (!pod.contains("status") || !pod["status"].contains("phase") ||
      !pod["status"]["phase"].is_string()) {
    return "Pending";
  }
  return pod["status"]["phase"].get<std::string>();
}

bool IsTerminal(const Json& pod) {
  std::string phase = PodPhase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

Json PodEvent(const Json& pod, const std::string& component, const std::string& type,
              const std::string& reason, const std::string& action, const std::string& message) {
  const Json& meta = pod["metadata"];
  char suffix[32];
  std::snprintf(
      suffix, sizeof(suffix), ".%llx",
      static_cast<unsigned long long>(std::chrono::system_clock::now().time_since_epoch().count()));
  std::string now = NowRfc3339();
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", meta.value("name", std::string()) + suffix},
            {"namespace", meta.value("namespace", std::string("default"))}}},
          {"involvedObject",
           {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"name", meta.value("name", std::string())},
            {"namespace", meta.value("namespace", std::string("default"))},
            {"uid", meta.value("uid", std::string())}}},
          {"reason", reason},
          {"message", message},
          {"type", type},
          {"action", action},
          {"source", {{"component", component}}},
          {"reportingComponent", component},
          {"reportingInstance", component},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"eventTime", nullptr},
          {"count", 1}};
}

}  // namespace edl::fakekube
