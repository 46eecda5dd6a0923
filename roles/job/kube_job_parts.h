// Private to roles/job/kube_*.cc: the names of a job's objects and the
// connection the client makes to the cluster.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "roles/job/process_options.h"

namespace edl::kube {
class Client;
}

namespace edl::roles::job {

// The master's batch/v1 Job and its Service; its pods are
// <job>-master-<5 letters>, made by the Job controller.
std::string MasterName(const std::string& job);
std::string ConfigMapName(const std::string& job);
std::string SecretName(const std::string& job);

struct KubeConnection {
  std::unique_ptr<kube::Client> client;
  std::string ns;           // --namespace, else the config's
  std::string description;  // where the config came from, for messages
  KubeConnection();
  KubeConnection(KubeConnection&&) noexcept;
  ~KubeConnection();
};
// --kubeconfig / --context / --namespace -> a client.
Result<KubeConnection> ConnectToKube(const KubeJobOptions& k);

// The job's newest master pod (labels edl-job, edl-role=master): a running
// or pending one before a finished one; NotFound naming the job if none.
Result<nlohmann::json> FindMasterPod(kube::Client& client, const std::string& ns,
                                     const std::string& job);

// "5s", "3m", "2h", "4d" since an RFC 3339 creationTimestamp ("?" if malformed).
std::string Age(const std::string& created);

}  // namespace edl::roles::job
