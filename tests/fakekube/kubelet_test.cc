// Tests for the fake cluster's kubelet: real child processes, their exit
// codes, logs, environment, volumes, graceful deletion, OOM kills and
// eviction, all observed through the Store.
#include "tests/fakekube/server/kubelet.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/fakekube/pod_fixtures.h"
#include "tests/fakekube/server/container_env.h"
#include "tests/fakekube/server/pod_conditions.h"

namespace edl::fakekube {
namespace {

using testing::Create;
using testing::GetPod;
using testing::PodPhaseOf;
using testing::ShellPod;
using testing::Terminated;
using testing::WaitUntil;

// A Store plus a kubelet for node-0 with the image "shell" → /bin.
class KubeletTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Kubelet::Options options;
    options.images = {{"shell", "/bin"}};
    options.restart_backoff = std::chrono::milliseconds(20);
    kubelet_ = std::make_unique<Kubelet>(store_, options);
    ASSERT_TRUE(kubelet_->Start().ok());
  }
  void TearDown() override { kubelet_->Stop(); }

  // Creates the pod already bound to node-0 (no scheduler here).
  Json Run(Json pod) {
    pod["spec"]["nodeName"] = "node-0";
    return Create(store_, "pods", std::move(pod));
  }
  Json Pod(const std::string& name) { return GetPod(store_, name); }
  bool WaitPhase(const std::string& name, const std::string& phase) {
    return WaitUntil([&] { return PodPhaseOf(Pod(name)) == phase; });
  }
  std::string LogOf(const Json& pod) { return store_.Log(pod["metadata"]["uid"]); }

  Store store_;
  std::unique_ptr<Kubelet> kubelet_;
};

TEST_F(KubeletTest, RunsTheCommandAndReportsItsExitCodeAndOutput) {
  Json created = Run(ShellPod("fails", {"/bin/sh", "-c", "echo hi; exit 3"}));
  ASSERT_TRUE(WaitPhase("fails", "Failed"));
  Json pod = Pod("fails");
  Json terminated = Terminated(pod);
  EXPECT_EQ(terminated["exitCode"], 3);
  EXPECT_EQ(terminated["reason"], "Error");
  EXPECT_TRUE(terminated.contains("startedAt"));
  EXPECT_TRUE(terminated.contains("finishedAt"));
  EXPECT_EQ(LogOf(created), "hi\n");
  // A loopback address of the kubelet's own block (127.N.x.y, N in 12..250).
  const std::string ip = pod["status"]["podIP"].get<std::string>();
  ASSERT_EQ(ip.rfind("127.", 0), 0u) << ip;
  const int block = std::stoi(ip.substr(4));
  EXPECT_TRUE(block >= 12 && block <= 250) << ip;
  EXPECT_EQ(pod["status"]["hostIP"], "127.0.0.1");
}

TEST_F(KubeletTest, ReportsRunningWithPodIpAndReadyConditions) {
  Run(ShellPod("sleeper", {"/bin/sleep", "1000"}));
  ASSERT_TRUE(WaitPhase("sleeper", "Running"));
  Json pod = Pod("sleeper");
  for (const char* type : {"Initialized", "Ready", "ContainersReady"}) {
    const Json* condition = FindPodCondition(pod, type);
    ASSERT_NE(condition, nullptr) << type;
    EXPECT_EQ((*condition)["status"], "True") << type;
  }
  EXPECT_TRUE(pod["status"]["containerStatuses"][0]["state"].contains("running"));
  EXPECT_TRUE(pod["status"].contains("startTime"));
}

TEST_F(KubeletTest, GivesEachPodItsOwnLoopbackAddress) {
  Run(ShellPod("one", {"/bin/sh", "-c", "exit 0"}));
  Run(ShellPod("two", {"/bin/sh", "-c", "exit 0"}));
  ASSERT_TRUE(WaitPhase("one", "Succeeded"));
  ASSERT_TRUE(WaitPhase("two", "Succeeded"));
  EXPECT_NE(Pod("one")["status"]["podIP"], Pod("two")["status"]["podIP"]);
  EXPECT_EQ(Terminated(Pod("one"))["reason"], "Completed");
}

TEST_F(KubeletTest, ExpandsVariablesAndFillsTheDownwardApi) {
  Create(store_, "configmaps",
         {{"metadata", {{"name", "settings"}}}, {"data", {{"level", "debug"}}}});
  Create(store_, "secrets",
         {{"metadata", {{"name", "creds"}}}, {"data", {{"password", "cHc="}}}});  // "pw"
  Json pod = ShellPod("env", {"/bin/sh", "-c",
                              "echo \"$POD|$NS|$UID|$IP|$NODE|$B|$LEVEL|$PASSWORD\"; "
                              "echo '$(B) $$(A) $(MISSING)'"});
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "A"}, {"value", "x"}},
      {{"name", "B"}, {"value", "$(A)-y"}},
      {{"name", "POD"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "NS"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}},
      {{"name", "UID"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}},
      {{"name", "IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}},
      {{"name", "NODE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
      {{"name", "LEVEL"},
       {"valueFrom", {{"configMapKeyRef", {{"name", "settings"}, {"key", "level"}}}}}},
      {{"name", "PASSWORD"},
       {"valueFrom", {{"secretKeyRef", {{"name", "creds"}, {"key", "password"}}}}}}};
  Json created = Run(pod);
  ASSERT_TRUE(WaitPhase("env", "Succeeded"));
  Json done = Pod("env");
  std::string uid = created["metadata"]["uid"];
  std::string ip = done["status"]["podIP"];
  EXPECT_EQ(LogOf(created),
            "env|default|" + uid + "|" + ip + "|node-0|x-y|debug|pw\n" + "x-y $(A) $(MISSING)\n");
}

TEST_F(KubeletTest, WaitsWithCreateContainerConfigErrorForAMissingConfigMapKey) {
  Json pod = ShellPod("needs-config", {"/bin/sh", "-c", "echo $V"});
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "V"}, {"valueFrom", {{"configMapKeyRef", {{"name", "later"}, {"key", "v"}}}}}}};
  Json created = Run(pod);
  ASSERT_TRUE(WaitUntil([&] {
    Json p = Pod("needs-config");
    return p["status"].contains("containerStatuses") &&
           p["status"]["containerStatuses"][0]["state"].contains("waiting") &&
           p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] ==
               "CreateContainerConfigError";
  }));
  EXPECT_EQ(PodPhaseOf(Pod("needs-config")), "Pending");
  EXPECT_EQ(Pod("needs-config")["status"]["containerStatuses"][0]["state"]["waiting"]["message"],
            "configmap \"later\" not found");
  // Once the ConfigMap exists the kubelet retries and the pod runs.
  Create(store_, "configmaps", {{"metadata", {{"name", "later"}}}, {"data", {{"v", "now"}}}});
  ASSERT_TRUE(WaitPhase("needs-config", "Succeeded"));
  EXPECT_EQ(LogOf(created), "now\n");
}

TEST_F(KubeletTest, LeavesAPodWithAnUnknownImagePendingWithErrImagePull) {
  Json pod = ShellPod("no-image", {"/bin/true"});
  pod["spec"]["containers"][0]["image"] = "registry.example/unknown:1.0";
  Run(pod);
  ASSERT_TRUE(WaitUntil([&] {
    Json p = Pod("no-image");
    return p["status"].contains("containerStatuses") &&
           p["status"]["containerStatuses"][0]["state"].contains("waiting") &&
           p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ErrImagePull";
  }));
  EXPECT_EQ(PodPhaseOf(Pod("no-image")), "Pending");
}

TEST_F(KubeletTest, ReportsStartErrorWhenTheCommandDoesNotExist) {
  Run(ShellPod("typo", {"no-such-program-anywhere"}));
  ASSERT_TRUE(WaitPhase("typo", "Failed"));
  Json terminated = Terminated(Pod("typo"));
  EXPECT_EQ(terminated["reason"], "StartError");
  EXPECT_EQ(terminated["exitCode"], 128);
  EXPECT_NE(terminated["message"].get<std::string>().find("executable file not found in $PATH"),
            std::string::npos);
}

TEST_F(KubeletTest, MountsAConfigMapVolumeReadOnlyAtItsMountPath) {
  Create(store_, "configmaps",
         {{"metadata", {{"name", "model"}}}, {"data", {{"model.json", "{\"layers\":[]}"}}}});
  const std::string mount_path = "/tmp/edl-sim-test-mount-" + std::to_string(getpid());
  Json pod = ShellPod("reader", {"/bin/sh", "-c",
                                 "cat " + mount_path +
                                     "/model.json; echo; "
                                     "touch " +
                                     mount_path + "/x 2>/dev/null || echo read-only"});
  pod["spec"]["volumes"] = {{{"name", "cfg"}, {"configMap", {{"name", "model"}}}}};
  pod["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", "cfg"}, {"mountPath", mount_path}, {"readOnly", true}}};
  Json created = Run(pod);
  ASSERT_TRUE(WaitUntil([&] { return IsTerminal(Pod("reader")); }));
  EXPECT_EQ(PodPhaseOf(Pod("reader")), "Succeeded") << Pod("reader").dump();
  EXPECT_EQ(LogOf(created), "{\"layers\":[]}\nread-only\n");
  // The mount lived only in the pod's mount namespace.
  EXPECT_FALSE(std::filesystem::exists(mount_path + "/model.json"));
  std::filesystem::remove(mount_path);
}

TEST_F(KubeletTest, GracefulDeleteSendsSigtermBeforeTheFinalDelete) {
  const std::string marker = "/tmp/edl-sim-test-term-" + std::to_string(getpid());
  std::filesystem::remove(marker);
  Json pod = ShellPod("graceful", {"/bin/sh", "-c",
                                   "trap 'echo term > " + marker +
                                       "; exit 0' TERM; "
                                       "echo ready; while true; do sleep 0.05; done"});
  Json created = Run(pod);
  ASSERT_TRUE(WaitPhase("graceful", "Running"));
  // Running is reported when the process starts; the trap is set once it
  // says so (a SIGTERM before that would kill the shell, as in a real pod).
  ASSERT_TRUE(WaitUntil([&] { return LogOf(created).find("ready") != std::string::npos; }));
  testing::PodEventLog log(store_, "graceful");
  bool marker_before_deleted = false;
  log.OnEvent([&](const WatchEvent& event) {
    if (event.type == "DELETED") marker_before_deleted = std::filesystem::exists(marker);
  });
  ASSERT_TRUE(store_.Delete("pods", "default", "graceful", DeleteRequest{}).ok());
  ASSERT_TRUE(WaitUntil([&] { return log.Saw("DELETED"); }));
  std::vector<WatchEvent> events = log.Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_TRUE(IsDeleting(events[0].object));
  EXPECT_EQ(PodPhase(events[1].object), "Succeeded");  // the trap exits 0
  EXPECT_EQ(Terminated(events[1].object)["exitCode"], 0);
  EXPECT_EQ(events[2].type, "DELETED");
  EXPECT_TRUE(marker_before_deleted);
  std::ifstream in(marker);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "term");
  std::filesystem::remove(marker);
}

TEST_F(KubeletTest, KillsAtTheDeadlineWhenSigtermIsIgnored) {
  Json pod =
      ShellPod("stubborn", {"/bin/sh", "-c", "trap '' TERM; echo ready; while true; do :; done"});
  pod["spec"]["terminationGracePeriodSeconds"] = 1;
  Json created = Run(pod);
  ASSERT_TRUE(WaitPhase("stubborn", "Running"));
  ASSERT_TRUE(WaitUntil([&] { return LogOf(created).find("ready") != std::string::npos; }));
  testing::PodEventLog log(store_, "stubborn");
  ASSERT_TRUE(store_.Delete("pods", "default", "stubborn", DeleteRequest{}).ok());
  ASSERT_TRUE(WaitUntil([&] { return log.Saw("DELETED"); }));
  std::vector<WatchEvent> events = log.Events();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(Terminated(events[events.size() - 2].object)["exitCode"], 137);
  EXPECT_EQ(PodPhase(events.back().object), "Failed");
}

TEST_F(KubeletTest, OomKillsAProcessTreeOverItsMemoryLimit) {
  // dd's 64 MiB buffer in a child of the shell: the whole tree is counted.
  Json pod = ShellPod(
      "hungry", {"/bin/sh", "-c", "dd if=/dev/zero of=/dev/null bs=64M count=1000000; echo done"});
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"memory", "16Mi"}}}};
  Run(pod);
  ASSERT_TRUE(WaitPhase("hungry", "Failed"));
  Json terminated = Terminated(Pod("hungry"));
  EXPECT_EQ(terminated["reason"], "OOMKilled");
  EXPECT_EQ(terminated["exitCode"], 137);
  EXPECT_EQ(FindPodCondition(Pod("hungry"), "DisruptionTarget"), nullptr);
}

TEST_F(KubeletTest, RestartsAContainerWhoseRestartPolicyIsAlways) {
  Json pod = ShellPod("flaky", {"/bin/sh", "-c", "echo run; exit 1"});
  pod["spec"]["restartPolicy"] = "Always";
  Json created = Run(pod);
  ASSERT_TRUE(WaitUntil([&] {
    Json p = Pod("flaky");
    return p["status"].contains("containerStatuses") &&
           p["status"]["containerStatuses"][0]["restartCount"].get<int>() >= 2;
  }));
  Json status = Pod("flaky")["status"]["containerStatuses"][0];
  EXPECT_EQ(status["lastState"]["terminated"]["exitCode"], 1);
  EXPECT_NE(PodPhaseOf(Pod("flaky")), "Failed");
  EXPECT_EQ(LogOf(created).rfind("run\nrun\n", 0), 0u);
}

TEST_F(KubeletTest, EvictionFailsThePodWithoutDeletingIt) {
  Run(ShellPod("evictee", {"/bin/sleep", "1000"}));
  ASSERT_TRUE(WaitPhase("evictee", "Running"));
  testing::PodEventLog log(store_, "evictee");
  const std::string message =
      "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi.";
  ASSERT_TRUE(kubelet_->Evict("default", "evictee", message).ok());
  ASSERT_TRUE(WaitPhase("evictee", "Failed"));
  Json pod = Pod("evictee");
  EXPECT_EQ(pod["status"]["reason"], "Evicted");
  EXPECT_EQ(pod["status"]["message"], message);
  const Json* disruption = FindPodCondition(pod, "DisruptionTarget");
  ASSERT_NE(disruption, nullptr);
  EXPECT_EQ((*disruption)["reason"], "TerminationByKubelet");
  EXPECT_FALSE(IsDeleting(pod));
  // Watchers hear of a write after it is visible to readers: wait for it.
  ASSERT_TRUE(WaitUntil([&] { return !log.Events().empty(); }));
  EXPECT_EQ(log.Events().size(), 1u);  // one MODIFIED, no DELETED
  EXPECT_FALSE(kubelet_->Evict("default", "evictee", message).ok());
  EXPECT_EQ(kubelet_->Evict("default", "nobody", message).code(), StatusCode::kNotFound);
}

TEST(ExpandVars, FollowsTheKubernetesRules) {
  EnvList env = {{"A", "x"}, {"EMPTY", ""}};
  EXPECT_EQ(ExpandVars("$(A)", env), "x");
  EXPECT_EQ(ExpandVars("a$(A)b$(A)", env), "axbx");
  EXPECT_EQ(ExpandVars("$$(A)", env), "$(A)");
  EXPECT_EQ(ExpandVars("$(MISSING)", env), "$(MISSING)");
  EXPECT_EQ(ExpandVars("$(EMPTY)|", env), "|");
}

TEST(ExpandVars, KeepsMalformedReferencesAsTheyAre) {
  EnvList env = {{"A", "x"}};
  EXPECT_EQ(ExpandVars("$", env), "$");
  EXPECT_EQ(ExpandVars("a$", env), "a$");
  EXPECT_EQ(ExpandVars("$(A", env), "$(A");
  EXPECT_EQ(ExpandVars("$()", env), "$()");
  EXPECT_EQ(ExpandVars("$A", env), "$A");
  EXPECT_EQ(ExpandVars("$$", env), "$");
  EXPECT_EQ(ExpandVars("$$$", env), "$$");
}

}  // namespace
}  // namespace edl::fakekube
