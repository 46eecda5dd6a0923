// What happened to a pod, read from the pod object a watch delivered (see
// docs/kubernetes.md, "What the master does when a pod goes"): still alive,
// completed, taken away by the cluster (preempted, evicted, node shutdown, deleted by someone
// else), OOMKilled, killed by a signal, or failed on its own. The master's relaunch policy depends
// on telling these apart, so the rules live in one pure function with its own tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace edl::kube {

struct PodFate {
  enum class Kind {
    kAlive,      // Pending or Running (possibly terminating)
    kCompleted,  // exited 0 on its own
    kDisrupted,  // preempted / evicted / shut down / deleted by someone else
    kOomKilled,  // over its memory limit
    kKilled,     // a signal (exit code >= 128) without a disruption
    kFailed,     // exit code 1..127: the application failed
    kGone,       // deleted with no terminal state seen: reason unknown
  };
  Kind kind = Kind::kAlive;
  int exit_code = -1;        // the container's, when known
  bool terminating = false;  // alive but with a deletionTimestamp
  std::string
      detail;  // "preempted by the scheduler (PreemptionByScheduler)", "exit code 3 (Error)"
};

const char* PodFateName(PodFate::Kind kind);

// `deleted`: the pod came in a DELETED event (or vanished in a relist).
// `deleted_by_us`: this client asked for its deletion, so a deletionTimestamp
// is not a disruption.
PodFate ClassifyPod(const nlohmann::json& pod, bool deleted, bool deleted_by_us);

// The pod's PodScheduled=False message ("0/2 nodes are available: ..."),
// "" if it is not unschedulable.
std::string UnschedulableMessage(const nlohmann::json& pod);

}  // namespace edl::kube
