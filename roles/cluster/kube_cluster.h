// KubeCluster: the job's processes as Kubernetes pods (docs/kubernetes.md),
// behind the same Cluster interface as LocalCluster, so the
// Supervisor's relaunch policy and the master's loop are the same on both.
//
// * Launch creates pod `<job>-<name>-<incarnation>` (a relaunch is a new
//   pod with a new name and UID; the old one is gone first) with the job's
//   labels (app.kubernetes.io/* plus edl-job, edl-role, edl-index,
//   edl-process), an ownerReference to the master pod when its UID is known
//   (deleting the master removes the job), the job's image, `edl <args>`,
//   env (the downward API's POD_NAME/POD_NAMESPACE/POD_UID/POD_IP plus the
//   spec's), resources and PriorityClass from PodOptionsFor, the job's
//   ConfigMap and Secret and the user's volumes, restartPolicy Never.
// * A pod watch (list + watch, relist on 410) feeds a state machine per
//   UID; an exit is reported once the pod is terminal and deleted (leftover
//   Failed pods, e.g. evicted ones, are deleted first), classified by
//   kube::ClassifyPod: preempted/evicted/deleted-by-others -> disrupted
//   (always relaunched by the Supervisor, no cap), OOMKilled -> not
//   relaunched, exit >= 128 -> signaled, else the exit code.
// * Signal(SIGTERM) is a graceful delete (the pod's grace period),
//   Signal(SIGKILL) a delete with grace 0; both with the UID as
//   precondition so a replacement is never hit.
// * Expose(name, port) creates a ClusterIP Service selecting that process's
//   pods, a stable address across relaunches (for PS), labelled as they are.
//
// Thread-safe. Kubernetes types stay in the .cc.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "roles/cluster/cluster.h"
#include "roles/cluster/kube_resources.h"

namespace edl::kube {
class Client;
class Reflector;
struct WatchEvent;
}  // namespace edl::kube

namespace edl::roles::cluster {

struct PodOptions {
  ResourceList requests, limits;
  std::string priority_class;  // "" = none
};

struct KubeClusterOptions {
  std::string job_name;        // a DNS label; prefixes pod names
  std::string namespace_name;  // "" = the client's default
  std::string image;
  std::string image_pull_policy = "IfNotPresent";
  std::string service_account;  // "" = the namespace's default
  // The owner of every pod and Service it makes (the master's batch/v1 Job,
  // so deleting the Job removes the job; "" uid = no owner).
  std::string owner_api_version = "batch/v1", owner_kind = "Job";
  std::string owner_name, owner_uid;
  // Pods of the job from an earlier master: adopted when true (a new master
  // continuing the job: live ones become its processes, ended ones are
  // deleted), all deleted when false (a new job).
  bool adopt = false;
  std::string config_map;       // mounted at kJobConfigDir ("" = none)
  std::string secret_name;      // mounted at kJobSecretDir ("" = none)
  std::string database_secret;  // AddDatabaseSecret ("" = none)
  std::vector<VolumeSpec> volumes;
  std::vector<std::pair<std::string, std::string>> env;  // for every pod
  int termination_grace_period_s = 30;
  std::vector<std::string> command = {"edl"};  // args of ProcessSpec follow
  // Resources and priority of a process ("ps-0", "worker-3").
  std::function<PodOptions(const std::string& process_name)> pod_options;
};

// Where every pod of a job sees the job's ConfigMap and Secret.
inline constexpr const char* kJobConfigDir = "/etc/edl/job";
inline constexpr const char* kJobSecretDir = "/etc/edl/secret";
// Where every pod sees the files of --database_secret.
inline constexpr const char* kDatabaseSecretDir = "/etc/edl/database";

class KubeCluster final : public Cluster {
 public:
  // `client` must outlive the cluster. Starts the pod watch; pods of the
  // job left over from before (e.g. a previous master) are deleted, or
  // adopted (options.adopt).
  static Result<std::unique_ptr<KubeCluster>> Create(kube::Client& client,
                                                     KubeClusterOptions options);
  ~KubeCluster() override;

  Status Launch(const ProcessSpec& spec) override;
  Status Signal(const std::string& name, int signal) override;
  std::optional<ProcessExit> WaitExit(std::chrono::milliseconds timeout) override;
  std::vector<std::string> Running() const override;

  // A ClusterIP Service `<job>-<name>` on `port` selecting `name`'s pods;
  // returns "clusterIP:port".
  Result<std::string> Expose(const std::string& name, int port);
  // Deletes the Services made by Expose (end of job).
  void DeleteServices();
  // The pod name now serving `name` ("" if none).
  std::string PodName(const std::string& name) const;
  // Why the live pod of process `name` waits to be scheduled, in the
  // scheduler's words ("0/1 nodes are available: 1 Insufficient cpu."),
  // as last seen; "" when it is not known to wait.
  std::string PendingReason(const std::string& name) const;

 private:
  struct Pod {
    std::string name;  // process name
    int64_t incarnation = 0;
    std::string pod_name;
    std::string last_phase;
    bool deleted_by_us = false;
    bool delete_sent = false;  // leftover terminal pod being removed
    bool logged_unschedulable = false;
    std::string unschedulable;  // the scheduler's last reason, while pending
    std::string last_json;      // the last state seen (serialized)
  };

  KubeCluster(kube::Client& client, KubeClusterOptions options);
  void OnEvent(const kube::WatchEvent& event);
  std::string PodJson(const ProcessSpec& spec, int64_t incarnation,
                      const std::string& pod_name) const;

  kube::Client& client_;
  const KubeClusterOptions options_;
  std::string namespace_;
  std::unique_ptr<kube::Reflector> reflector_;

  mutable std::mutex mu_;
  std::condition_variable exited_cv_;
  // Guarded by mu_.
  std::map<std::string, Pod> pods_;          // uid -> pod
  std::map<std::string, std::string> live_;  // process name -> uid of its live pod
  std::map<std::string, int64_t> incarnations_;
  std::deque<ProcessExit> exits_;
  std::set<std::string> reported_uids_;
  std::vector<std::string> services_;
};

}  // namespace edl::roles::cluster
