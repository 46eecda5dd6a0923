// The fake API server driven by the real kubectl (1.32, as installed by the
// Google Cloud SDK, else the kubectl on PATH): what kubectl prints is what a
// user of a real cluster would see. Skipped where there is no kubectl; under
// CI=true that fails (tests/testing/skip.h).
#include <gtest/gtest.h>

#include <sstream>

#include "kube/yaml.h"
#include "roles/job/kube_job.h"
#include "tests/fakekube/kubectl_path.h"
#include "tests/fakekube/loopback_api_server.h"
#include "tests/fakekube/server/job_controller.h"
#include "tests/fakekube/store_fixtures.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::fakekube {
namespace {

using edl::testing::EdlProcess;
using edl::testing::KubectlPath;
using edl::testing::RunResult;
using edl::testing::TempDir;

Json ShellPod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}};
}

// Watches end after 3 s unless the client asks otherwise (get -w).
ApiServer::Options ShortWatches() {
  ApiServer::Options options;
  options.default_watch_timeout = std::chrono::seconds(3);
  return options;
}

class KubectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubectl_ = KubectlPath();
    if (kubectl_.empty()) {
      EDL_SKIP_OR_FAIL_IN_CI(edl::testing::kNoKubectl);
    }
    ASSERT_TRUE(api_.Start().ok());
    edl::testing::WriteText(dir_.File("kubeconfig"), api_.server().Kubeconfig());
  }

  // Starts kubectl with this server's kubeconfig and a fresh cache.
  std::unique_ptr<EdlProcess> Start(std::vector<std::string> args,
                                    const std::string& kubeconfig = "") {
    std::vector<std::string> full = {"--kubeconfig",
                                     kubeconfig.empty() ? dir_.File("kubeconfig") : kubeconfig,
                                     "--cache-dir", dir_.File("cache-" + std::to_string(++runs_))};
    full.insert(full.end(), args.begin(), args.end());
    return std::make_unique<EdlProcess>(kubectl_, full);
  }
  // Runs kubectl to its end (at most 60 s).
  RunResult Run(std::vector<std::string> args, const std::string& kubeconfig = "") {
    auto process = Start(std::move(args), kubeconfig);
    RunResult result;
    if (!edl::testing::WaitFor([&] { return process->Exited(&result); }, 60)) {
      ADD_FAILURE() << "kubectl did not finish; stderr so far: " << process->Err();
    }
    return result;
  }

  std::string kubectl_;
  testing::LoopbackApiServer api_{ShortWatches()};
  TempDir dir_;
  int runs_ = 0;
};

TEST_F(KubectlTest, GetPodsOnAnEmptyNamespaceSaysNoResourcesFound) {
  RunResult r = Run({"get", "pods"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("No resources found in default namespace."), std::string::npos) << r.err;
}

TEST_F(KubectlTest, GetPodsPrintsNameAndAgeColumns) {
  ASSERT_TRUE(api_.store().Create("pods", "default", ShellPod("job1-worker-0")).ok());
  RunResult r = Run({"get", "pods"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header.rfind("NAME", 0), 0u) << r.out;
  EXPECT_NE(header.find("AGE"), std::string::npos) << r.out;
  EXPECT_EQ(row.rfind("job1-worker-0 ", 0), 0u) << r.out;
}

TEST_F(KubectlTest, GetPodsWatchPrintsAPodAddedMeanwhileAndExitsWhenTheWatchEnds) {
  auto watch = Start({"get", "pods", "-w"});
  ASSERT_TRUE(edl::testing::WaitFor([&] { return api_.server().open_watches() == 1; }, 60))
      << watch->Err();
  ASSERT_TRUE(api_.store().Create("pods", "default", ShellPod("added-meanwhile")).ok());
  RunResult r;
  ASSERT_TRUE(edl::testing::WaitFor([&] { return watch->Exited(&r); }, 60)) << watch->Out();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("added-meanwhile"), std::string::npos) << r.out;
}

TEST_F(KubectlTest, CreateFromAFilePrintsCreated) {
  edl::testing::WriteText(dir_.File("pod.json"), ShellPod("x").dump());
  RunResult r = Run({"create", "-f", dir_.File("pod.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "pod/x created\n");
  auto stored = api_.store().Get("pods", "default", "x");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored.value)["status"]["phase"], "Pending");
}

TEST_F(KubectlTest, DeleteOfAnUnscheduledPodPrintsDeleted) {
  ASSERT_TRUE(api_.store().Create("pods", "default", ShellPod("x")).ok());
  RunResult r = Run({"delete", "pod", "x"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "pod \"x\" deleted\n");
  EXPECT_FALSE(api_.store().Get("pods", "default", "x").ok());
}

TEST_F(KubectlTest, DeleteOfARunningPodWaitsUntilTheKubeletRemovesIt) {
  ASSERT_TRUE(api_.store().Create("pods", "default", ShellPod("x")).ok());
  ASSERT_TRUE(
      api_.store()
          .Update("pods", "default", "x", [](Json& pod) { pod["spec"]["nodeName"] = "node-1"; })
          .ok());
  auto deleting = Start({"delete", "pod", "x"});
  // kubectl watches the terminating pod (fieldSelector metadata.name=x)
  // until its DELETED event; then the "kubelet" finishes the deletion.
  ASSERT_TRUE(edl::testing::WaitFor([&] { return api_.server().open_watches() == 1; }, 60))
      << deleting->Err();
  auto terminating = api_.store().Get("pods", "default", "x");
  ASSERT_TRUE(terminating.ok());
  EXPECT_EQ((*terminating.value)["metadata"]["deletionGracePeriodSeconds"], 30);
  ASSERT_TRUE(api_.store().Remove("pods", "default", "x").ok());
  RunResult r;
  ASSERT_TRUE(edl::testing::WaitFor([&] { return deleting->Exited(&r); }, 60));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "pod \"x\" deleted\n");
}

TEST_F(KubectlTest, LogsPrintsWhatTheContainerWrote) {
  auto created = api_.store().Create("pods", "default", ShellPod("x"));
  ASSERT_TRUE(created.ok());
  testing::MarkRunning(api_.store(), "x");
  api_.store().AppendLog((*created.value)["metadata"]["uid"],
                         "epoch 1 loss 0.5\nepoch 2 loss 0.3\n");
  RunResult r = Run({"logs", "x"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "epoch 1 loss 0.5\nepoch 2 loss 0.3\n");
  RunResult tail = Run({"logs", "x", "--tail=1"});
  EXPECT_EQ(tail.out, "epoch 2 loss 0.3\n");
}

TEST_F(KubectlTest, LogsOfAPodThatNeverStartedSayWaitingToStart) {
  ASSERT_TRUE(api_.store().Create("pods", "default", ShellPod("x")).ok());
  RunResult r = Run({"logs", "x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("container \"main\" in pod \"x\" is waiting to start: ContainerCreating"),
            std::string::npos)
      << r.err;
}

TEST_F(KubectlTest, GetOfAMissingPodPrintsNotFound) {
  RunResult r = Run({"get", "pod", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Error from server (NotFound): pods \"nope\" not found\n");
}

TEST_F(KubectlTest, AWrongTokenGivesUnauthorized) {
  std::string kubeconfig = api_.server().Kubeconfig();
  size_t at = kubeconfig.find(api_.token());
  ASSERT_NE(at, std::string::npos);
  kubeconfig.replace(at, api_.token().size(), "wrong-token");
  edl::testing::WriteText(dir_.File("wrong"), kubeconfig);
  RunResult r = Run({"get", "pods"}, dir_.File("wrong"));
  // kubectl 1.32 fails in discovery and prints client-go's wording for a
  // 401 there, as it does against a real cluster.
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: You must be logged in to the server ("), std::string::npos) << r.err;
  EXPECT_TRUE(r.err.find("Unauthorized") != std::string::npos ||
              r.err.find("the server has asked for the client to provide credentials") !=
                  std::string::npos)
      << r.err;
}

TEST_F(KubectlTest, AJobCreatedByKubectlRunsAPodAndDeletingItRemovesThePod) {
  JobController controller(api_.store(), {});
  controller.Start();
  const Json job = {{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "x"}}},
                    {"spec",
                     {{"template",
                       {{"spec",
                         {{"restartPolicy", "Never"},
                          {"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}}}}}};
  edl::testing::WriteText(dir_.File("job.json"), job.dump());
  RunResult created = Run({"create", "-f", dir_.File("job.json")});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out, "job.batch/x created\n");
  ASSERT_TRUE(edl::testing::WaitFor(
      [&] {
        return api_.store().List("pods", "default", "job-name=x", "").value->items.size() == 1;
      },
      60));
  RunResult get = Run({"get", "jobs"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out.rfind("NAME", 0), 0u) << get.out;
  EXPECT_NE(get.out.find("\nx "), std::string::npos) << get.out;
  RunResult limit =
      Run({"get", "job", "x", "-o", "jsonpath={.spec.backoffLimit} {.status.active}"});
  ASSERT_EQ(limit.exit_code, 0) << limit.err;
  EXPECT_EQ(limit.out, "6 1");
  RunResult deleted = Run({"delete", "job", "x"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "job.batch \"x\" deleted\n");
  EXPECT_TRUE(edl::testing::WaitFor(
      [&] { return api_.store().List("pods", "default", "job-name=x", "").value->items.empty(); },
      60));
  controller.Stop();
}

TEST_F(KubectlTest, CreatesTheObjectsEdlWritesForAJobAndPrintsWhyAJobIsInvalid) {
  roles::job::MasterProcessOptions m;
  m.job.job_name = "mnist";
  m.model.model_def = "zoo:mnist_mlp";
  auto manifests = roles::job::BuildKubeJobManifests(m, "secret");
  ASSERT_TRUE(manifests.ok()) << manifests.status().message();
  std::vector<Json> objects;
  for (const std::string& text : *manifests) objects.push_back(Json::parse(text));
  // As `edl train --cluster=kube --yaml` writes them.
  edl::testing::WriteText(dir_.File("mnist.yaml"), kube::ToYaml(objects));
  RunResult created = Run({"create", "-f", dir_.File("mnist.yaml")});
  EXPECT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out,
            "secret/mnist-secret created\nconfigmap/mnist-config created\n"
            "job.batch/mnist-master created\nservice/mnist-master created\n");
  Json job = objects[2];
  job["metadata"]["name"] = "x";
  job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0].erase("status");
  edl::testing::WriteText(dir_.File("x.json"), job.dump());
  RunResult refused = Run({"create", "-f", dir_.File("x.json")});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("The Job \"x\" is invalid: "
                             "spec.podFailurePolicy.rules[0].onPodConditions[0].status: Required "
                             "value"),
            std::string::npos)
      << refused.err;
}

}  // namespace
}  // namespace edl::fakekube
