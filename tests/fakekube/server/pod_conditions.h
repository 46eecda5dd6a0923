// Helpers for the status.conditions of a v1 Pod, shared by the fake
// scheduler and kubelet so that both write conditions the way the real
// components do (lastTransitionTime changes only when status changes,
// lastProbeTime null). Pure functions on JSON.
#pragma once

#include <string>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

// The wall-clock time now, RFC 3339 with seconds.
std::string NowRfc3339();

// The condition of `type` in pod.status.conditions, or nullptr.
const Json* FindPodCondition(const Json& pod, const std::string& type);

// Adds or replaces the condition of `type`. reason and message are left
// out when empty.
void SetPodCondition(Json& pod, const std::string& type, const std::string& status,
                     const std::string& reason = "", const std::string& message = "");

// Whether metadata.deletionTimestamp is set; status.phase ("Pending" when
// absent); whether that phase is Succeeded or Failed.
bool IsDeleting(const Json& pod);
std::string PodPhase(const Json& pod);
bool IsTerminal(const Json& pod);

// A core/v1 Event about `pod` as the named component records it (reason
// e.g. "Preempted", type "Normal"/"Warning"), ready for Store::Create in
// the pod's namespace.
Json PodEvent(const Json& pod, const std::string& component, const std::string& type,
              const std::string& reason, const std::string& action, const std::string& message);

}  // namespace edl::fakekube
