// Crashes as they happen on Kubernetes, end to end on the fake cluster
// (docs/kubernetes.md, "Failures the tests inject"): the master's process
// killed outright (SIGKILL inside its pod: nothing saved on the way out, the
// Job controller counts a failure and starts another pod after its
// back-off), with the master's state on a volume and in its ConfigMap; the
// API server restarting with its store kept, and its watches cut; the API
// server answering 429, 500 and 503 for a while. Every job ends with every
// record trained once per epoch, and every wait has a deadline.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "tests/fakekube/fake_cluster.h"
#include "tests/testing/counting_job.h"
#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

// The API-server tests delete a worker after the faults and wait for its
// replacement: enough epochs that the job is still running then, on a
// loaded machine too.
constexpr int kLongEpochs = 12;

using Json = nlohmann::json;

// Deletes the job's pod of `worker` and waits (60 s at most) until a new
// pod of it runs: the master still sees and manages its pods.
bool DeletedWorkerIsReplaced(FakeCluster& cluster, const std::string& job,
                             const std::string& worker) {
  const std::string selector = "edl-job=" + job + ",edl-process=" + worker;
  std::string victim;
  for (const Json& p : cluster.Pods(selector)) victim = Name(p);
  if (victim.empty() || !cluster.client().Delete(kube::Pods(), "default", victim, {}).ok()) {
    return false;
  }
  return WaitFor(
      [&] {
        for (const Json& p : cluster.Pods(selector)) {
          if (Name(p) != victim && p["status"].value("phase", "") == "Running") return true;
        }
        return false;
      },
      60);
}

// `edl train` of the zoo MLP for `epochs` (1 PS, 2 workers) on `cluster`,
// running in the background.
std::unique_ptr<EdlProcess> StartJob(FakeCluster& cluster, const std::string& name, int epochs,
                                     std::vector<std::string> extra) {
  std::vector<std::string> flags = {"--model_def=zoo:fashion_mnist_mlp",
                                    "--training_data=" + kTrain,
                                    "--num_epochs=" + std::to_string(epochs),
                                    "--num_ps_pods=1",
                                    "--num_workers=2",
                                    "--minibatch_size=64",
                                    "--num_minibatches_per_task=8"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  std::vector<std::string> args = {"train"};
  for (auto& a : KubeJob(cluster, name, flags)) args.push_back(a);
  return std::make_unique<EdlProcess>(args);
}

// Waits (bounded) for the job to end; it must succeed with each of its
// `epochs` trained exactly once. The client's output.
std::string FinishedJob(FakeCluster& cluster, EdlProcess& client, int epochs) {
  RunResult r;
  EXPECT_TRUE(WaitFor([&] { return client.Exited(&r); }, 240))
      << "the job did not end: " << client.Out() << cluster.Log();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << cluster.Log();
  EXPECT_EQ(EpochsTrainedExactlyOnce(r.out), epochs) << r.out;
  return r.out;
}

// The job `name` (with `extra` flags) loses its master's process to
// SIGKILL mid-epoch; the Job controller starts another master pod, which
// recovers from `where`. The job trains the counting model
// (tests/testing/counting_job.h) for 2 epochs: its exported rows, not the
// ledger, must show every record applied exactly twice.
void MasterProcessKilled(const std::string& name, std::vector<std::string> extra,
                         const std::string& where) {
  constexpr int kEpochs = 2;
  constexpr int kRecords = 16384;  // 64 tasks an epoch: each a write to the ConfigMap
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  TempDir data;
  WriteCountingJob(data, kRecords);
  std::vector<std::string> flags = {"--model_def=" + data.File("counter.json"),
                                    "--training_data=" + data.File("train.csv"),
                                    "--num_epochs=" + std::to_string(kEpochs),
                                    "--num_ps_pods=1",
                                    "--num_workers=2",
                                    "--minibatch_size=32",  // the counting model's learning rate
                                    "--num_minibatches_per_task=8",
                                    "--output=" + data.File("out")};
  flags.insert(flags.end(), extra.begin(), extra.end());
  std::vector<std::string> args = {"train"};
  for (auto& a : KubeJob(cluster, name, flags)) args.push_back(a);
  auto client = std::make_unique<EdlProcess>(args);
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion(name) > 60; }, 120))
      << client->Out() << cluster.Log();
  const std::string masters = "edl-job=" + name + ",edl-role=master";
  std::vector<Json> before = cluster.Pods(masters);
  ASSERT_EQ(before.size(), 1u);
  // The client follows this master's log before it dies.
  ASSERT_TRUE(WaitFor(
      [&] {
        return client->Out().find("master pod " + Name(before[0]) + ": Running") !=
               std::string::npos;
      },
      30))
      << client->Out();
  std::vector<int> pids;
  for (int pid : FindPids({" master ", "--job_name=" + name})) {
    if (pid != client->pid()) pids.push_back(pid);
  }
  ASSERT_EQ(pids.size(), 1u) << "the master's process, inside pod " << Name(before[0]);
  ASSERT_EQ(::kill(pids[0], SIGKILL), 0);
  // The pod fails (exit code 137), the Job counts it and, after its
  // back-off, starts a new master pod.
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const Json& p : cluster.Pods(masters)) {
          if (Name(p) != Name(before[0]) && p["status"].value("phase", "") == "Running") {
            return true;
          }
        }
        return false;
      },
      60))
      << client->Out() << cluster.Log();
  const std::string out = FinishedJob(cluster, *client, kEpochs);
  const std::map<float, int> rows = RowHistogram(data.File("out"), kRecords);
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
  EXPECT_NE(out.find("the Job replaced the master"), std::string::npos) << out;
  EXPECT_NE(out.find(where), std::string::npos) << out;
  EXPECT_NE(out.find("master replaced 1 time"), std::string::npos) << out;
  EXPECT_NE(out.find("adopted pod"), std::string::npos) << out;
  auto job = cluster.client().Get(kube::Jobs(), "default", name + "-master");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["status"].value("succeeded", 0), 1) << job->dump();
  EXPECT_EQ((*job)["status"].value("failed", 0), 1) << job->dump();  // SIGKILL counts
}

TEST(KubeCrashes, AMasterProcessKilledMidJobIsRestartedByItsJobAndRecoversFromTheVolume) {
  TempDir state;
  MasterProcessKilled("killvol",
                      {"--volume=host_path=" + state.path() + ",mount_path=/state",
                       "--checkpoint_dir=/state/ckpt", "--checkpoint_steps=500"},
                      "recovered its state from /state/ckpt/master-state");
}

TEST(KubeCrashes, AMasterProcessKilledMidJobIsRestartedByItsJobAndRecoversFromItsConfigMap) {
  MasterProcessKilled("killcm", {}, "kept in ConfigMap killcm-master-state (restored)");
}

// The master's state on a volume (it writes nothing to the API while it
// trains).
std::vector<std::string> StateOnVolume(const TempDir& state) {
  return {"--volume=host_path=" + state.path() + ",mount_path=/state",
          "--checkpoint_dir=/state/ckpt", "--checkpoint_steps=500"};
}

// The API server goes away for 2 s and comes back with its store (as over
// the same etcd), then cuts every watch: the master's pod watch and the
// client following its log carry on.
TEST(KubeCrashes, TheApiServerRestartingAndCuttingItsWatchesMidJobDoesNotStopTheJob) {
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  TempDir state;
  std::unique_ptr<EdlProcess> client =
      StartJob(cluster, "apirestart", kLongEpochs, StateOnVolume(state));
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion("apirestart") > 40; }, 120))
      << client->Out() << cluster.Log();
  ASSERT_GE(cluster.Hook("restart?down_ms=2000").size(), 1u);
  ASSERT_TRUE(WaitFor(
      [&] {
        Json state = cluster.HookState();
        return state.is_object() && state.value("restarts", 0) == 1;
      },
      30))
      << cluster.Log();
  // Training goes on after the restart...
  int64_t version = -1;
  ASSERT_TRUE(WaitFor([&] { return (version = cluster.ModelVersion("apirestart")) > 0; }, 60));
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion("apirestart") > version + 20; }, 120))
      << client->Out() << cluster.Log();
  // The master watches its pods again (the client's log stream is no watch)...
  ASSERT_TRUE(WaitFor(
      [&] {
        Json state = cluster.HookState();
        return state.is_object() && state.value("watches", 0) >= 1;
      },
      60))
      << client->Out();
  // ...and carries on after its watch is cut.
  Json cut = Json::parse(cluster.Hook("cut-watches"), nullptr, false);
  ASSERT_TRUE(cut.is_object());
  EXPECT_GE(cut.value("cut", 0), 1) << cut.dump();
  // The master still sees its pods: a worker deleted now is replaced.
  ASSERT_TRUE(DeletedWorkerIsReplaced(cluster, "apirestart", "worker-0"))
      << client->Out() << cluster.Log();
  const std::string out = FinishedJob(cluster, *client, kLongEpochs);
  EXPECT_NE(out.find("taken away by the cluster"), std::string::npos) << out;
  EXPECT_EQ(cluster.Count("edl-job=apirestart,edl-role=master", "Succeeded"), 1);
}

// 503s (without Retry-After, as an API server behind an unhealthy etcd
// sends them) for 3 s, 10 429s with Retry-After, then 500s for 2 s, each
// with the watches cut so that the master's pod watch must be opened again
// through them: the master and the client wait them out, and the master
// still sees its pods afterwards.
TEST(KubeCrashes, TheApiServerAnswering429And500And503ForAWhileDoesNotStopTheJob) {
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  TempDir state;
  std::unique_ptr<EdlProcess> client =
      StartJob(cluster, "apifaults", kLongEpochs, StateOnVolume(state));
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion("apifaults") > 40; }, 120))
      << client->Out() << cluster.Log();
  auto injected = [&] {
    Json state = cluster.HookState();
    return state.is_object() ? state.value("faults_injected", int64_t{0}) : int64_t{-1};
  };
  int64_t before = 0;
  for (const char* plan : {"code=503&ms=3000&retry_after=0", "code=429&count=10&retry_after=1",
                           "code=500&ms=2000&retry_after=0"}) {
    ASSERT_FALSE(cluster.Hook(std::string("faults?") + plan).empty());
    ASSERT_FALSE(cluster.Hook("cut-watches").empty());
    // Faults were answered (to the master's watch, the client, and this
    // test's own reads of the master's status) until the plan ran out.
    ASSERT_TRUE(WaitFor(
        [&] {
          (void)cluster.ModelVersion("apifaults");
          return injected() > before && cluster.ModelVersion("apifaults") > 0;
        },
        60))
        << plan << ": " << client->Out() << cluster.Log();
    before = injected();
  }
  // The master's pod watch came back: a worker deleted now is replaced.
  ASSERT_TRUE(DeletedWorkerIsReplaced(cluster, "apifaults", "worker-1"))
      << client->Out() << cluster.Log();
  const std::string out = FinishedJob(cluster, *client, kLongEpochs);
  EXPECT_NE(out.find("taken away by the cluster"), std::string::npos) << out;
  EXPECT_EQ(cluster.Count("edl-job=apifaults,edl-role=master", "Succeeded"), 1);
}

}  // namespace
}  // namespace edl::testing
