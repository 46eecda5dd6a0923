// FakeCluster: an `edl-fake-kube` process for one end-to-end test (one node
// of the given capacity, the edl:dev image mapped to the build directory,
// PriorityClasses high and low), a client for its API, and the test hooks
// that make its API server fail on purpose (api_server.h). KubeJob gives
// the flags of an `edl train --cluster=kube` job on it.
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

class FakeCluster {
 public:
  using Json = nlohmann::json;

  // Starts it and waits (30 s at most) for its kubeconfig; ready() says
  // whether it came up.
  explicit FakeCluster(const std::string& node);
  ~FakeCluster();  // SIGTERM: every pod process goes too
  bool ready() const { return ready_ && client_ != nullptr; }
  std::string kubeconfig() const { return dir_.File("kubeconfig"); }
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

 private:
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
