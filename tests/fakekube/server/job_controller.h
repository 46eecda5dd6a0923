// JobController: the kube-controller-manager's Job controller (batch/v1),
// reduced to the Jobs edl creates: one pod at a time (parallelism and
// completions 1), restartPolicy Never. For each Job that has not finished:
//  * it creates a pod from spec.template (generateName "<job>-", the
//    template's labels plus batch.kubernetes.io/job-name, job-name,
//    batch.kubernetes.io/controller-uid, controller-uid; an ownerReference
//    to the Job with controller and blockOwnerDeletion) when none is active
//    or terminating (podReplacementPolicy Failed: a replacement starts once
//    the old pod is gone or Failed, so two never run at once);
//  * a pod that ends Failed, or disappears before it succeeded (deleted,
//    lost with its node), counts in status.failed, unless
//    spec.podFailurePolicy has a rule {action: Ignore, onPodConditions:
//    [{type: DisruptionTarget, status: "True"}]} and the pod carries that
//    condition with that status (preempted, evicted), or a rule {action:
//    Ignore, onExitCodes: {operator: In|NotIn, values}} matching a
//    container's exit code: then it is replaced without counting and
//    without back-off; a matching rule with action FailJob fails the Job
//    at once (reason PodFailurePolicy);
//  * after a counted failure the next pod waits the controller's back-off,
//    10 s doubling per consecutive failure up to 6 min, as the real one;
//  * more failures than spec.backoffLimit (default 6): condition Failed,
//    reason BackoffLimitExceeded, "Job has reached the specified backoff
//    limit", and the active pod is deleted; a pod that Succeeded:
//    condition Complete, status.succeeded 1, completionTime.
// status.active, .failed, .succeeded, .startTime and .conditions are kept
// as the real controller writes them. Its pods carry the finalizer
// batch.kubernetes.io/job-tracking until they are counted (so a pod that
// ends and is removed at once is still seen with its exit code), or their
// Job is gone.
//
// Reads and writes only through the Store. Runs on its own thread (a
// ControllerLoop), woken by Job and pod events and every 200 ms (for pods
// waiting out a back-off); RunOnce() does one pass on the caller's thread.
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "tests/fakekube/server/controller_loop.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class JobController {
 public:
  struct Options {
    std::chrono::milliseconds backoff{10000};  // after the first failure
    std::chrono::milliseconds max_backoff{360000};
  };
  JobController(Store& store, Options options);
  ~JobController();  // Stop()s
  JobController(const JobController&) = delete;
  JobController& operator=(const JobController&) = delete;

  void Start();
  void Stop();  // idempotent
  void RunOnce();

 private:
  struct Tracked {
    std::set<std::string> counted;     // pod uids already counted (failed/succeeded/ignored)
    std::map<std::string, Json> seen;  // live pods by uid, as last seen
    int64_t failed = 0;
    int consecutive = 0;  // counted failures since the last pod started
    std::chrono::steady_clock::time_point last_failure{};
  };

  void Sync(const Json& job, Tracked& t);

  Store& store_;
  const Options options_;
  std::mutex pass_mu_;                   // serializes passes; guards jobs_
  std::map<std::string, Tracked> jobs_;  // by Job uid
  ControllerLoop loop_;                  // last: its thread stops before the rest goes
};

}  // namespace edl::fakekube
