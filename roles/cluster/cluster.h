// Cluster: where a job's processes run (docs/distributed.md). The master asks it to
// launch, kill and watch the PS and worker processes by name; LocalCluster
// runs them as child processes of this machine, HostedCluster as children
// of the local job host (hosted_cluster.h), KubeCluster as pods
// (kube_cluster.h, docs/kubernetes.md).
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::roles::cluster {

struct ProcessSpec {
  std::string name;                        // unique in the job: "ps-0", "worker-3"
  std::vector<std::string> args;           // arguments after the edl binary
  std::map<std::string, std::string> env;  // added to the inherited environment
};

// How a process ended.
struct ProcessExit {
  std::string name;
  int64_t incarnation = 0;  // 1 for the first launch of `name`, 2 after a relaunch, ...
  bool signaled = false;    // killed by a signal (preemption, kill -9, OOM killer)
  int code = 0;             // exit code, or the signal number when signaled
  // Clusters that know why (Kubernetes): taken away by the cluster
  // (preempted, evicted, node shut down, deleted by someone else) whatever
  // the exit code; or killed for exceeding its memory limit.
  bool disrupted = false;
  bool oom_killed = false;
  std::string detail;            // the cluster's words: "preempted (PreemptionByScheduler)"
  std::string ToString() const;  // "worker-1 (incarnation 2) killed by signal 9"
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  // Starts a process. AlreadyExists if one of that name is running.
  virtual Status Launch(const ProcessSpec& spec) = 0;
  // Sends `signal` (SIGTERM: graceful, SIGKILL) to the named process.
  // NotFound if none of that name is running.
  virtual Status Signal(const std::string& name, int signal) = 0;
  // The next process exit, waiting at most `timeout`; nullopt on timeout.
  virtual std::optional<ProcessExit> WaitExit(std::chrono::milliseconds timeout) = 0;
  // Names of running processes, sorted.
  virtual std::vector<std::string> Running() const = 0;
};

}  // namespace edl::roles::cluster
