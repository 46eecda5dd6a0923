// FakeCluster: an `edl-fake-kube` process for one end-to-end test (one node
// of the given capacity, the edl:dev image mapped to the build directory,
// PriorityClasses high and low), a client for its API, and the test hooks
// that make its API server fail on purpose (api_server.h). KubeJob gives
// the flags of an `edl train --cluster=kube` job on it.
//
// Least privilege, enforced: the API server authorizes by RBAC, and holds
// scripts/k8s/rbac.yaml's objects (moved to namespace default). So the
// master pod runs as service account edl-master with exactly Role
// edl-master, and the `edl` client runs as user kSubmitter (kubeconfig())
// bound to exactly Role edl-user; the test harness itself is the admin
// (client(), admin_kubeconfig()). A request either makes that is not
// granted gets 403, and fails the test: the destructor reports every 403
// answered to anyone but the admin. Audit() gives what each identity asked
// for (tests/fakekube/rbac_grants.h compares it with the Roles).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kube/client.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {

inline const std::string kData = EDL_FASHION_MNIST;
inline const std::string kTrain = kData + "/train-images-idx3-ubyte.gz";
inline const std::string kTest = kData + "/t10k-images-idx3-ubyte.gz";

// Who runs `edl` (kubeconfig()), and the master pods' identity.
inline const std::string kSubmitter = "submitter";
inline const std::string kMasterAccount = "system:serviceaccount:default:edl-master";

class FakeCluster {
 public:
  using Json = nlohmann::json;

  // Starts it and waits (30 s at most) for its kubeconfig; ready() says
  // whether it came up.
  explicit FakeCluster(const std::string& node);
  ~FakeCluster();  // SIGTERM: every pod process goes too
  bool ready() const { return ready_ && client_ != nullptr; }
  // kSubmitter's: for `edl`.
  std::string kubeconfig() const { return dir_.File(kSubmitter + ".kubeconfig"); }
  // The cluster admin's: for kubectl standing in for a person who may do
  // anything (and for client()).
  std::string admin_kubeconfig() const { return dir_.File("kubeconfig"); }
  kube::Client& client() { return *client_; }
  std::string Log() const { return process_.Err(); }

  // Pods matching the label selector, as the API lists them ({} while it
  // does not answer).
  std::vector<Json> Pods(const std::string& selector);
  int Count(const std::string& selector, const std::string& phase);
  // The job's model version from the master's /status, through the API
  // server's service proxy; -1 while unreachable.
  int64_t ModelVersion(const std::string& job);

  // POST /debug/fakekube/<hook> (cut-watches, restart?down_ms=,
  // faults?code=&count=&ms=): the answer's body, or a gtest failure and "".
  std::string Hook(const std::string& hook_and_query);
  // GET /debug/fakekube/state ({"restarts", "restarting",
  // "faults_injected", "watches"}); null while the API server does not
  // answer.
  Json HookState();
  // The audit.k8s.io/v1 Events of `user` ("" = everyone's), oldest first;
  // a gtest failure and {} while the API server does not answer.
  std::vector<Json> Audit(const std::string& user);

 private:
  // Creates rbac.yaml's objects in namespace default and binds kSubmitter
  // to Role edl-user (as rbac.yaml's example RoleBinding does).
  Status InstallRbac();

  TempDir dir_;
  EdlProcess process_;
  bool ready_ = false;
  std::unique_ptr<kube::Client> client_;
};

// `--cluster=kube` and the flags every job on the fake cluster takes (its
// kubeconfig, the image, resources and priorities), then `extra`.
std::vector<std::string> KubeJob(const FakeCluster& cluster, const std::string& name,
                                 std::vector<std::string> extra);

std::string Name(const nlohmann::json& pod);

}  // namespace edl::testing
