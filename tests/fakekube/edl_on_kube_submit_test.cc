// A submit that fails half-way on the fake cluster: the job's Secret and
// ConfigMap are created, its master Job is refused (a Job of that name
// exists), and the client takes the two back, so nothing of the job is left.
// This is the one path that needs Role edl-user's delete on Secrets and
// ConfigMaps (scripts/k8s/rbac.yaml).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kube/client.h"
#include "tests/fakekube/fake_cluster.h"
#include "tests/fakekube/rbac_grants.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

using Json = nlohmann::json;

TEST(EdlOnKube, ASubmitWhoseMasterJobIsRefusedTakesBackItsSecretAndConfigMap) {
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  // A Job of the name job "taken" would give its master, someone else's.
  Json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", "taken-master"}}},
      {"spec",
       {{"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers", Json::array({{{"name", "main"},
                                         {"image", "busybox"},
                                         {"command", Json::array({"sleep", "600"})}}})}}}}}}}};
  ASSERT_TRUE(cluster.client().Create(kube::Jobs(), "default", job).ok());
  std::vector<std::string> args = {"train"};
  for (auto& a : KubeJob(cluster, "taken",
                         {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
                          "--num_ps_pods=1", "--num_workers=1", "--detach"})) {
    args.push_back(a);
  }
  RunResult r = RunEdl(args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("creating the master Job of job taken"), std::string::npos) << r.err;
  EXPECT_EQ(cluster.client().Get(kube::Secrets(), "default", "taken-secret").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(cluster.client().Get(kube::ConfigMaps(), "default", "taken-config").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Minus(kTakingBackASubmit, UsedPermissions(cluster.Audit(kSubmitter))), Permissions{});
}

}  // namespace
}  // namespace edl::testing
