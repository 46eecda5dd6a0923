// Scheduler: the fake cluster's kube-scheduler. Binds every Pending pod
// without spec.nodeName (and with schedulerName default-scheduler) to the
// first node with room, in priority order (spec.priority, then creation
// time). A pod that fits nowhere gets PodScheduled False/Unschedulable with
// kube-scheduler's message; if it may preempt, lower-priority pods on one
// node are marked DisruptionTarget/PreemptionByScheduler and deleted
// gracefully, the pod gets status.nominatedNodeName and is bound once they
// are gone. Room is computed from the requests of the
// non-terminal pods bound to a node, including pods being deleted.
//
// Reads and writes only through the Store. Runs on its own thread (a
// ControllerLoop), woken by pod and node events; RunOnce() does one pass on
// the caller's thread (tests). Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/fakekube/server/cluster_spec.h"
#include "tests/fakekube/server/controller_loop.h"
#include "tests/fakekube/server/preemption.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class Scheduler {
 public:
  struct Options {
    std::vector<NodeSpec> nodes = DefaultNodeSpecs();
    std::string scheduler_name = "default-scheduler";
  };
  Scheduler(Store& store, Options options);
  ~Scheduler();  // Stop()s
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Subscribes to the store and starts the scheduling thread.
  void Start();
  // Unsubscribes and joins the thread. Idempotent.
  void Stop();

  // One scheduling pass over every pod.
  void RunOnce();

 private:
  using Usage = std::map<std::string, ResourceList>;
  using Bound = std::map<std::string, std::vector<PodInfo>>;

  std::optional<PodInfo> Describe(const Json& pod);
  void SchedulePod(const PodInfo& pod, const Json& object, Usage& used, Bound& bound);
  void Bind(const PodInfo& pod, const std::string& node);
  void MarkUnschedulable(const PodInfo& pod, const Json& object, const std::string& message,
                         const std::string& nominated);
  void Preempt(const PodInfo& victim, const PodInfo& preemptor, const std::string& node);
  void RecordEvent(const Json& pod, const std::string& reason, const std::string& action,
                   const std::string& message);

  Store& store_;
  const Options options_;

  std::mutex pass_mu_;                          // serializes passes; guards first_seen_, next_seen_
  std::map<std::string, uint64_t> first_seen_;  // pod uid → order first seen
  uint64_t next_seen_ = 0;

  ControllerLoop loop_;  // last: its thread stops before the rest goes
};

}  // namespace edl::fakekube
