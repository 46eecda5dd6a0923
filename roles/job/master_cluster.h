// Where the master runs a job's PS and workers: a free port for each local
// PS, and the Kubernetes cluster object (pod options from the job's flags).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "kube/client.h"
#include "roles/cluster/kube_cluster.h"
#include "roles/job/process_options.h"

namespace edl::roles::job {

// A port nobody listens on right now: bound, read and released. The PS binds
// it moments later (a rare race with another process is possible); the port
// stays the PS's for the whole job, so a relaunched PS is found again.
Result<int> PickFreePort(const std::string& host);

// The ownerReferences that make an object the master's Job's (read from
// the master pod `pod_name`'s controller); empty when the pod has no Job
// or `pod_name` is "" (not in a pod).
Result<nlohmann::json> MasterJobOwner(kube::Client& client, const std::string& ns,
                                      const std::string& pod_name);

// The pods of a job on Kubernetes: the Job that runs the master pod
// (o.kube.pod_name) is their owner, so deleting it removes the job. `adopt`:
// a master continuing the job keeps the pods it finds.
Result<std::unique_ptr<cluster::KubeCluster>> MakeKubeCluster(const MasterProcessOptions& o,
                                                              kube::Client& client, bool adopt);

}  // namespace edl::roles::job
