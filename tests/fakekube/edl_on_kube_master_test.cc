// edl on Kubernetes, end to end: the master pod deleted mid-job (as `kubectl
// delete pod` or a node drain does). Its Job starts a new master, which
// continues the job from the state the last one kept, on a volume or in a
// ConfigMap, and adopts the running workers. Like every fake-cluster test,
// under scripts/k8s/rbac.yaml's Roles (fake_cluster.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "kube/client.h"
#include "tests/fakekube/fake_cluster.h"
#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

using Json = nlohmann::json;

// The job `name` (with `extra` flags) loses its master pod mid-run; the Job
// controller starts another, which finds the state `where` says.
void MasterPodDeleted(const std::string& name, int epochs, std::vector<std::string> extra,
                      const std::string& where) {
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  std::vector<std::string> args = {"train"};
  std::vector<std::string> flags = {"--model_def=zoo:fashion_mnist_mlp",
                                    "--training_data=" + kTrain,
                                    "--validation_data=" + kTest,
                                    "--num_epochs=" + std::to_string(epochs),
                                    "--num_ps_pods=1",
                                    "--num_workers=2",
                                    "--minibatch_size=32"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  for (auto& a : KubeJob(cluster, name, flags)) args.push_back(a);
  EdlProcess client(args);
  const std::string masters = "edl-job=" + name + ",edl-role=master";
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion(name) > 300; }, 300))
      << client.Out() << cluster.Log();
  std::vector<Json> before = cluster.Pods(masters);
  ASSERT_EQ(before.size(), 1u);
  const std::vector<Json> workers_before = cluster.Pods("edl-job=" + name + ",edl-role=worker");
  // kubectl delete pod: the master gets SIGTERM and leaves (exit code 75,
  // which the Job's podFailurePolicy ignores); the Job controller starts
  // another at once, which continues from the state the last one kept.
  ASSERT_TRUE(cluster.client().Delete(kube::Pods(), "default", Name(before[0]), {}).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const Json& p : cluster.Pods(masters)) {
          if (Name(p) != Name(before[0]) && p["status"].value("phase", "") == "Running")
            return true;
        }
        return false;
      },
      120))
      << client.Out() << cluster.Log();
  RunResult r;
  ASSERT_TRUE(WaitFor([&] { return client.Exited(&r); }, 900)) << client.Out() << cluster.Log();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << cluster.Log();
  EXPECT_NE(r.out.find("the Job replaced the master"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(where), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("adopted pod"), std::string::npos) << r.out;
  EXPECT_EQ(EpochsTrainedExactlyOnce(r.out), epochs) << r.out;
  EXPECT_NE(r.out.find("master replaced 1 time"), std::string::npos) << r.out;
  // The workers were adopted, not replaced.
  for (const Json& w : workers_before) {
    EXPECT_NE(r.out.find("adopted pod " + Name(w)), std::string::npos) << r.out;
  }
  // How long the job stood still (reported, not asserted: docs/kubernetes.md):
  // from the old master leaving to the new one's first task.
  std::smatch left, again;
  if (std::regex_search(
          r.out, left,
          std::regex("(\\d\\d):(\\d\\d\\.\\d+)Z WARNING SIGTERM: this master leaves")) &&
      std::regex_search(r.out, again,
                        std::regex("(\\d\\d):(\\d\\d\\.\\d+)Z INFO dispatching again"))) {
    double gap =
        (std::stod(again[1]) - std::stod(left[1])) * 60 + std::stod(again[2]) - std::stod(left[2]);
    if (gap < 0) gap += 3600;
    std::printf(
        "master failover on the fake cluster: dispatching again %.2f s after the old "
        "master left\n",
        gap);
    ::testing::Test::RecordProperty("master_failover_s", std::to_string(gap));
  }
  auto job = cluster.client().Get(kube::Jobs(), "default", name + "-master");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["status"].value("succeeded", 0), 1) << job->dump();
  // The master that left (exit code 75) is not a failure: no back-off.
  EXPECT_EQ((*job)["status"].value("failed", 0), 0) << job->dump();
}

TEST(EdlOnKube, AMasterPodDeletedMidJobIsReplacedAndContinuesFromTheCheckpointVolume) {
  TempDir state;
  MasterPodDeleted("failover", 6,
                   {"--volume=host_path=" + state.path() + ",mount_path=/state",
                    "--checkpoint_dir=/state/ckpt", "--checkpoint_steps=500"},
                   "recovered its state from /state/ckpt/master-state");
}

TEST(EdlOnKube, AMasterPodDeletedMidJobIsReplacedAndContinuesFromItsConfigMap) {
  // Every journal write is a ConfigMap write here (tens of ms on the fake
  // cluster): a shorter job.
  MasterPodDeleted("cmstate", 2, {}, "kept in ConfigMap cmstate-master-state (restored)");
}

}  // namespace
}  // namespace edl::testing
