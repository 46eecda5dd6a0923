#include "tests/fakekube/fake_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "kube/config.h"
#include "tests/fakekube/rbac_grants.h"
#include "tests/testing/paths.h"

namespace edl::testing {

FakeCluster::FakeCluster(const std::string& node)
    : process_(
          edl::testing::FakeKubeBinary(),
          {"--dir", dir_.path(), "--nodes", node, "--image",
           "edl:dev=" + std::filesystem::path(edl::testing::EdlBinary()).parent_path().string(),
           "--image", "busybox=/bin", "--priority_class", "high=100000", "--priority_class",
           "low=1000", "--authorization_mode", "RBAC", "--user", kSubmitter}) {
  ready_ = WaitFor([&] { return std::filesystem::exists(dir_.File("kubeconfig")); }, 30);
  if (!ready_) return;
  auto config = kube::LoadKubeconfig(admin_kubeconfig(), "");
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
  if (Status installed = InstallRbac(); !installed.ok()) {
    ADD_FAILURE() << "installing scripts/k8s/rbac.yaml: " << installed.message();
    ready_ = false;
  }
}

Status FakeCluster::InstallRbac() {
  EDL_ASSIGN_OR_RETURN(std::vector<Json> objects, LoadRbacManifest("default"));
  objects.push_back(
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "RoleBinding"},
       {"metadata", {{"name", "edl-user-" + kSubmitter}}},
       {"subjects",
        Json::array(
            {{{"kind", "User"}, {"name", kSubmitter}, {"apiGroup", "rbac.authorization.k8s.io"}}})},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "edl-user"}}}});
  for (const Json& object : objects) {
    const std::string kind = object.value("kind", "");
    kube::Resource resource{"rbac.authorization.k8s.io", "v1", "", true};
    if (kind == "ServiceAccount") resource = kube::Resource{"", "v1", "serviceaccounts", true};
    if (kind == "Role") resource.plural = "roles";
    if (kind == "RoleBinding") resource.plural = "rolebindings";
    if (resource.plural.empty()) return InvalidArgument("rbac.yaml: unexpected kind " + kind);
    EDL_RETURN_IF_ERROR(client_->Create(resource, "default", object).status());
  }
  return Status::Ok();
}

FakeCluster::~FakeCluster() {
  if (ready()) {
    for (const Json& event : Audit("")) {
      const Json& status = event.value("responseStatus", Json::object());
      if (status.value("code", 0) != 403) continue;
      ADD_FAILURE() << "the fake API server refused a request (rbac.yaml grants too little?): "
                    << event.dump();
    }
  }
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

std::vector<nlohmann::json> FakeCluster::Audit(const std::string& user) {
  auto r = client_->GetRaw("/debug/fakekube/audit?user=" + user);
  if (!r.ok()) {
    ADD_FAILURE() << "reading the audit log: " << r.status().message();
    return {};
  }
  Json list = Json::parse(*r, nullptr, false);
  if (!list.is_object() || !list["items"].is_array()) {
    ADD_FAILURE() << "the audit log is not an EventList: " << *r;
    return {};
  }
  return list["items"].get<std::vector<Json>>();
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
