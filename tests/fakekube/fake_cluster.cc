#include "tests/fakekube/fake_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "kube/config.h"
#include "tests/testing/paths.h"

namespace edl::testing {

FakeCluster::FakeCluster(const std::string& node)
    : process_(
          edl::testing::FakeKubeBinary(),
          {"--dir", dir_.path(), "--nodes", node, "--image",
           "edl:dev=" + std::filesystem::path(edl::testing::EdlBinary()).parent_path().string(), "--image",
           "busybox=/bin", "--priority_class", "high=100000", "--priority_class", "low=1000"}) {
  ready_ = WaitFor([&] { return std::filesystem::exists(dir_.File("kubeconfig")); }, 30);
  if (!ready_) return;
  auto config = kube::LoadKubeconfig(kubeconfig(), "");
  if (!config.ok()) {
    ADD_FAILURE() << config.status().message();
    return;
  }
  auto client = kube::Client::Create(*config);
  if (!client.ok()) {
    ADD_FAILURE() << client.status().message();
    return;
  }
  client_ = std::move(*client);
}

FakeCluster::~FakeCluster() {
  process_.Signal(SIGTERM);
  RunResult r;
  WaitFor([&] { return process_.Exited(&r); }, 30);
}

std::vector<nlohmann::json> FakeCluster::Pods(const std::string& selector) {
  auto list = client_->List(kube::Pods(), "default", kube::ListOptions{selector, "", "", 500});
  if (!list.ok()) return {};
  return (*list)["items"].get<std::vector<Json>>();
}

int FakeCluster::Count(const std::string& selector, const std::string& phase) {
  int n = 0;
  for (const Json& p : Pods(selector)) n += p["status"].value("phase", "") == phase;
  return n;
}

int64_t FakeCluster::ModelVersion(const std::string& job) {
  auto r =
      client_->GetRaw("/api/v1/namespaces/default/services/" + job + "-master:50001/proxy/status");
  if (!r.ok()) return -1;
  Json j = Json::parse(*r, nullptr, false);
  return j.is_object() ? j.value("model_version", int64_t{-1}) : -1;
}

std::string FakeCluster::Hook(const std::string& hook_and_query) {
  auto r = client_->PostRaw("/debug/fakekube/" + hook_and_query, "", "application/json", {});
  if (!r.ok()) {
    ADD_FAILURE() << hook_and_query << ": " << r.status().message();
    return "";
  }
  return *r;
}

nlohmann::json FakeCluster::HookState() {
  auto r = client_->GetRaw("/debug/fakekube/state");
  if (!r.ok()) return nullptr;
  Json j = Json::parse(*r, nullptr, false);
  return j.is_object() ? j : Json();
}

std::vector<std::string> KubeJob(const FakeCluster& cluster, const std::string& name,
                                 std::vector<std::string> extra) {
  std::vector<std::string> args = {"--cluster=kube",
                                   "--kubeconfig=" + cluster.kubeconfig(),
                                   "--image_name=edl:dev",
                                   "--job_name=" + name,
                                   "--master_resource_request=cpu=0.5,memory=1Gi",
                                   "--ps_resource_request=cpu=1,memory=2Gi",
                                   "--worker_resource_request=cpu=1,memory=2Gi",
                                   "--master_pod_priority=high",
                                   "--ps_pod_priority=high",
                                   "--worker_pod_priority=low",
                                   "--termination_grace_period=10"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string Name(const nlohmann::json& pod) { return pod["metadata"].value("name", ""); }

}  // namespace edl::testing
