// KubeCluster (the master's view of its pods) against the fake API server
// over HTTPS, with no scheduler or kubelet: the test plays the cluster,
// writing pod states the way a kubelet or the scheduler would, and checks
// what the master concludes (roles/cluster/kube_cluster.h).
#include "roles/cluster/kube_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "kube/client.h"
#include "tests/fakekube/loopback_api_server.h"

namespace edl::fakekube {
namespace {

using roles::cluster::KubeCluster;
using roles::cluster::KubeClusterOptions;
using roles::cluster::PodOptions;
using roles::cluster::ProcessExit;
using roles::cluster::ProcessSpec;

class KubeClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.Start().ok());
    auto client = api_.NewKubeClient();
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    // The master pod, owner of the job's pods.
    auto master =
        api_.store().Create("pods", "default",
                            {{"metadata", {{"name", "j-master"}}},
                             {"spec", {{"containers", {{{"name", "main"}, {"image", "edl"}}}}}}});
    ASSERT_TRUE(master.ok());
    KubeClusterOptions ko;
    ko.job_name = "j";
    ko.image = "edl:dev";
    ko.owner_api_version = "v1";
    ko.owner_kind = "Pod";
    ko.owner_name = "j-master";
    ko.owner_uid = (*master.value)["metadata"]["uid"];
    ko.config_map = "j-config";
    ko.secret_name = "j-secret";
    ko.pod_options = [](const std::string&) {
      PodOptions p;
      p.requests = {{"cpu", "1"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}};
      p.limits = {{"memory", "3Gi"}};
      return p;
    };
    auto cluster = KubeCluster::Create(*client_, ko);
    ASSERT_TRUE(cluster.ok()) << cluster.status().message();
    cluster_ = std::move(*cluster);
  }

  Json PodOf(const std::string& process) {
    auto list = api_.store().List("pods", "default", "edl-process=" + process, "");
    EXPECT_TRUE(list.ok());
    Json newest;
    for (const Json& p : list.value->items) newest = p;
    return newest;
  }
  // The kubelet's part: the container ended with `code` (and `reason`).
  void Terminate(const std::string& pod, int code, const std::string& reason,
                 const std::function<void(Json&)>& more = nullptr) {
    auto r = api_.store().Update("pods", "default", pod, [&](Json& p) {
      p["spec"]["nodeName"] = "node-0";
      p["status"]["phase"] = code == 0 ? "Succeeded" : "Failed";
      p["status"]["containerStatuses"] =
          Json::array({{{"name", "main"},
                        {"state", {{"terminated", {{"exitCode", code}, {"reason", reason}}}}}}});
      if (more) more(p);
    });
    ASSERT_TRUE(r.ok()) << r.error.message;
  }
  std::optional<ProcessExit> NextExit() { return cluster_->WaitExit(std::chrono::seconds(10)); }

  testing::LoopbackApiServer api_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<KubeCluster> cluster_;
};

TEST_F(KubeClusterTest, LaunchCreatesALabelledOwnedPodWithTheJobsVolumesAndResources) {
  ASSERT_TRUE(cluster_->Launch(ProcessSpec{"worker-3", {"worker", "--x=1"}, {{"K", "V"}}}).ok());
  Json pod = PodOf("worker-3");
  ASSERT_TRUE(pod.is_object());
  EXPECT_EQ(pod["metadata"]["name"], "j-worker-3-1");
  const Json& labels = pod["metadata"]["labels"];
  EXPECT_EQ(labels["edl-job"], "j");
  EXPECT_EQ(labels["edl-role"], "worker");
  EXPECT_EQ(labels["edl-index"], "3");
  EXPECT_EQ(labels["app.kubernetes.io/instance"], "j");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["name"], "j-master");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
  const Json& c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["image"], "edl:dev");
  EXPECT_EQ(c["command"], Json::array({"edl"}));
  EXPECT_EQ(c["args"], Json::array({"worker", "--x=1"}));
  EXPECT_EQ(c["resources"]["requests"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(c["resources"]["limits"]["memory"], "3Gi");
  bool has_pod_ip = false, has_k = false;
  for (const Json& e : c["env"]) {
    has_pod_ip |=
        e["name"] == "POD_IP" && e["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP";
    has_k |= e["name"] == "K" && e["value"] == "V";
  }
  EXPECT_TRUE(has_pod_ip && has_k) << c["env"].dump();
  EXPECT_EQ(pod["spec"]["volumes"][0]["configMap"]["name"], "j-config");
  EXPECT_EQ(pod["spec"]["volumes"][1]["secret"]["secretName"], "j-secret");
  EXPECT_EQ(cluster_->Running(), std::vector<std::string>{"worker-3"});
  EXPECT_EQ(cluster_->Launch(ProcessSpec{"worker-3", {}, {}}).code(), StatusCode::kAlreadyExists);
}

TEST_F(KubeClusterTest, AFailedPodIsDeletedAndItsExitReportedOnceItIsGone) {
  ASSERT_TRUE(cluster_->Launch(ProcessSpec{"worker-0", {}, {}}).ok());
  Terminate("j-worker-0-1", 3, "Error");
  std::optional<ProcessExit> exit = NextExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->name, "worker-0");
  EXPECT_FALSE(exit->signaled);
  EXPECT_FALSE(exit->disrupted);
  EXPECT_EQ(exit->code, 3);
  // Reported only after the leftover pod was deleted.
  EXPECT_FALSE(api_.store().Get("pods", "default", "j-worker-0-1").ok());
  EXPECT_TRUE(cluster_->Running().empty());
  // The relaunch is a new pod with a new name.
  ASSERT_TRUE(cluster_->Launch(ProcessSpec{"worker-0", {}, {}}).ok());
  EXPECT_EQ(PodOf("worker-0")["metadata"]["name"], "j-worker-0-2");
}

TEST_F(KubeClusterTest, APreemptedPodIsDisruptedEvenWhenItExitedCleanly) {
  ASSERT_TRUE(cluster_->Launch(ProcessSpec{"worker-1", {}, {}}).ok());
  Terminate("j-worker-1-1", 0, "Completed", [](Json& p) {
    p["status"]["conditions"] = Json::array(
        {{{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "PreemptionByScheduler"}}});
  });
  std::optional<ProcessExit> exit = NextExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->disrupted);
  EXPECT_NE(exit->detail.find("PreemptionByScheduler"), std::string::npos) << exit->detail;
}

TEST_F(KubeClusterTest, AnOomKilledPodIsReportedAsSuch) {
  ASSERT_TRUE(cluster_->Launch(ProcessSpec{"worker-2", {}, {}}).ok());
  Terminate("j-worker-2-1", 137, "OOMKilled");
  std::optional<ProcessExit> exit = NextExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->oom_killed);
}

TEST_F(KubeClusterTest, AnEvictedPodLeftBehindIsRemovedAndCountedAsDisrupted) {
  ASSERT_TRUE(cluster_->Launch(ProcessSpec{"ps-0", {}, {}}).ok());
  Terminate("j-ps-0-1", 137, "Error", [](Json& p) {
    p["status"]["reason"] = "Evicted";
    p["status"]["message"] = "The node was low on resource: memory.";
  });
  std::optional<ProcessExit> exit = NextExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->disrupted);
  EXPECT_NE(exit->detail.find("Evicted"), std::string::npos);
  EXPECT_FALSE(api_.store().Get("pods", "default", "j-ps-0-1").ok());
}

TEST_F(KubeClusterTest, SigtermIsAGracefulDeleteOfThatPodOnly) {
  ASSERT_TRUE(cluster_->Launch(ProcessSpec{"worker-0", {}, {}}).ok());
  // Scheduled, so the delete is graceful (deletionTimestamp, pod kept).
  ASSERT_TRUE(api_.store()
                  .Update("pods", "default", "j-worker-0-1",
                          [](Json& p) {
                            p["spec"]["nodeName"] = "node-0";
                            p["status"]["phase"] = "Running";
                          })
                  .ok());
  ASSERT_TRUE(cluster_->Signal("worker-0", SIGTERM).ok());
  auto pod = api_.store().Get("pods", "default", "j-worker-0-1");
  ASSERT_TRUE(pod.ok());
  EXPECT_TRUE((*pod.value)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*pod.value)["metadata"]["deletionGracePeriodSeconds"], 30);
  // The kubelet finishes the pod; ours, so exit 0 is a completion.
  Terminate("j-worker-0-1", 0, "Completed");
  ASSERT_TRUE(api_.store().Remove("pods", "default", "j-worker-0-1").ok());
  std::optional<ProcessExit> exit = NextExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->disrupted);
  EXPECT_EQ(exit->code, 0);
  EXPECT_EQ(cluster_->Signal("worker-0", SIGTERM).code(), StatusCode::kNotFound);
}

TEST_F(KubeClusterTest, ExposeGivesAStableClusterIpAddress) {
  auto address = cluster_->Expose("ps-0", 2222);
  ASSERT_TRUE(address.ok()) << address.status().message();
  EXPECT_NE(address->find(":2222"), std::string::npos);
  auto service = api_.store().Get("services", "default", "j-ps-0");
  ASSERT_TRUE(service.ok());
  EXPECT_EQ((*service.value)["spec"]["selector"]["edl-process"], "ps-0");
  cluster_->DeleteServices();
  EXPECT_FALSE(api_.store().Get("services", "default", "j-ps-0").ok());
}

}  // namespace
}  // namespace edl::fakekube
