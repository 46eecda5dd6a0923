// edl on Kubernetes, end to end: `edl-fake-kube` (an HTTPS API server, a
// scheduler with capacity and priority preemption, a kubelet that runs each
// pod as a local process, a kube-proxy) and `edl train --cluster=kube`,
// with the disruptions a real cluster brings done through the API: a worker
// pod deleted, a worker preempted by a high-priority pod, a PS process
// killed (the master pod deleted: edl_on_kube_master_test.cc); `edl scale`
// up and down; `edl stop`. Every test runs the master
// and the client under scripts/k8s/rbac.yaml's Roles (fake_cluster.h), and
// the most complete ones check that each Role grants exactly what is used.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "kube/client.h"
#include "kube/config.h"
#include "net/rpc.h"
#include "tests/fakekube/fake_cluster.h"
#include "tests/fakekube/kubectl_path.h"
#include "tests/fakekube/rbac_grants.h"
#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::testing {
namespace {

using Json = nlohmann::json;

TEST(EdlOnKube, TrainsTheCnnThroughAPodDeletionAPreemptionAndAKilledPs) {
  // 6 CPUs: master 0.5 + 2 PS + 2 workers = 4.5, leaving 1.5.
  FakeCluster cluster("node-a:cpu=6,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  TempDir dir;
  std::vector<std::string> args = {"train"};
  for (auto& a : KubeJob(cluster, "cnn",
                         {"--model_def=zoo:fashion_mnist_cnn", "--training_data=" + kTrain,
                          "--validation_data=" + kTest, "--num_epochs=1", "--num_ps_pods=2",
                          "--num_workers=2", "--checkpoint_dir=" + dir.File("ckpt"),
                          "--checkpoint_steps=50", "--ps_resource_limit=cpu=2,memory=2Gi"})) {
    args.push_back(a);
  }
  EdlProcess client(args);
  const std::string workers = "edl-job=cnn,edl-role=worker";
  auto progressed = [&](int64_t past) {
    return WaitFor([&] { return cluster.ModelVersion("cnn") > past; }, 300);
  };
  ASSERT_TRUE(WaitFor([&] { return cluster.Count(workers, "Running") == 2; }, 120))
      << client.Out() << client.Err() << cluster.Log();
  ASSERT_TRUE(progressed(20)) << client.Out() << cluster.Log();
  // Each process computes on the CPUs its pod may use: the PS its limit,
  // the workers their request (no limit given), not one thread each.
  for (const Json& p : cluster.Pods("edl-job=cnn,edl-role=ps")) {
    const std::string args = p["spec"]["containers"][0]["args"].dump();
    EXPECT_NE(args.find("\"--num_threads=2\""), std::string::npos) << args;
  }
  for (const Json& p : cluster.Pods(workers)) {
    const std::string args = p["spec"]["containers"][0]["args"].dump();
    EXPECT_NE(args.find("\"--num_threads=1\""), std::string::npos) << args;
  }
  // The PS Services are labelled as the PS pods are.
  auto ps_services = cluster.client().List(
      kube::Services(), "default",
      kube::ListOptions{"edl-job=cnn,edl-role=ps,app.kubernetes.io/component=ps", "", "", 500});
  ASSERT_TRUE(ps_services.ok());
  EXPECT_EQ((*ps_services)["items"].size(), 2u) << ps_services->dump();

  // 1. A worker pod deleted (kubectl delete pod): replaced by a new pod.
  std::string victim;
  for (const Json& p : cluster.Pods(workers + ",edl-process=worker-0")) victim = Name(p);
  ASSERT_FALSE(victim.empty());
  ASSERT_TRUE(cluster.client().Delete(kube::Pods(), "default", victim, {}).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const Json& p : cluster.Pods(workers + ",edl-process=worker-0")) {
          if (Name(p) != victim && p["status"].value("phase", "") == "Running") return true;
        }
        return false;
      },
      120))
      << client.Out() << cluster.Log();
  int64_t version = cluster.ModelVersion("cnn");
  ASSERT_TRUE(progressed(version)) << client.Out();

  // 2. A high-priority pod that only fits if a worker goes: the scheduler
  // preempts one; the master's replacement waits for capacity and runs
  // once the hog is gone.
  Json hog = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "hog"}}},
              {"spec",
               {{"priorityClassName", "high"},
                {"restartPolicy", "Never"},
                {"containers", Json::array({{{"name", "main"},
                                             {"image", "busybox"},
                                             {"command", Json::array({"sleep", "600"})},
                                             {"resources", {{"requests", {{"cpu", "2"}}}}}}})}}}};
  ASSERT_TRUE(cluster.client().Create(kube::Pods(), "default", hog).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto h = cluster.client().Get(kube::Pods(), "default", "hog");
        return h.ok() && (*h)["status"].value("phase", "") == "Running";
      },
      120))
      << cluster.Log();
  EXPECT_EQ(cluster.Count(workers, "Running"), 1);
  EXPECT_GE(cluster.Count(workers, "Pending"), 1);
  ASSERT_TRUE(cluster.client()
                  .Delete(kube::Pods(), "default", "hog", kube::DeleteOptions{0, "Background", ""})
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return cluster.Count(workers, "Running") == 2; }, 120))
      << client.Out() << cluster.Log();

  // 3. A PS process killed (kill -9 inside its pod): a new PS pod behind
  // the same Service restores the latest checkpoint.
  std::vector<int> ps = FindPids({"--ps_index=1", "--job_name=cnn"});
  ASSERT_EQ(ps.size(), 1u);
  ::kill(ps[0], SIGKILL);
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<int> now = FindPids({"--ps_index=1", "--job_name=cnn"});
        return now.size() == 1 && now[0] != ps[0];
      },
      120))
      << client.Out() << cluster.Log();

  RunResult r;
  ASSERT_TRUE(WaitFor([&] { return client.Exited(&r); }, 900)) << client.Out() << cluster.Log();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << cluster.Log();
  EXPECT_EQ(EpochsWithNothingMissing(r.out), 1) << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.80) << r.out;
  EXPECT_NE(r.out.find("taken away by the cluster"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PreemptionByScheduler"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("killed by signal 9"), std::string::npos) << r.out;
  // The job's pods and PS services are gone; the master pod stays Succeeded.
  EXPECT_TRUE(WaitFor([&] { return cluster.Pods("edl-job=cnn,edl-role!=master").empty(); }, 60));
  EXPECT_EQ(cluster.Count("edl-job=cnn,edl-role=master", "Succeeded"), 1);

  // Least privilege: through a whole job with its failovers, with its state
  // in a ConfigMap (--checkpoint_dir is on no volume), the master used every
  // grant of its Role and, the fake enforcing the Role, nothing else.
  // Scaling needs nothing more (pods created and deleted:
  // StoppingTheJobRemovesEveryPodOfTheJob), nor does a master continuing
  // the job (AMasterPodDeletedMidJob...: everything it asks is granted).
  EXPECT_EQ(UsedPermissions(cluster.Audit(kMasterAccount)), RbacYamlGrants("edl-master"));
  const Permissions client_used = UsedPermissions(cluster.Audit(kSubmitter));
  EXPECT_EQ(Minus(client_used, RbacYamlGrants("edl-user")), Permissions{});
  EXPECT_EQ(Minus(kFollowingAJobToItsEnd, client_used), Permissions{});
}

TEST(EdlOnKube, TrainsWithAllreduceThroughAWorkerPodDeletion) {
  FakeCluster cluster("node-a:cpu=6,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  std::vector<std::string> args = {"train", "--distribution_strategy=AllreduceStrategy"};
  for (auto& a : KubeJob(cluster, "ring",
                         {"--model_def=zoo:fashion_mnist_cnn", "--training_data=" + kTrain,
                          "--validation_data=" + kTest, "--num_epochs=1", "--num_workers=3",
                          "--minibatch_size=32"})) {
    args.push_back(a);
  }
  EdlProcess client(args);
  const std::string workers = "edl-job=ring,edl-role=worker";
  ASSERT_TRUE(WaitFor([&] { return cluster.Count(workers, "Running") == 3; }, 120))
      << client.Out() << client.Err() << cluster.Log();
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion("ring") > 50; }, 300))
      << client.Out() << cluster.Log();
  // No PS: the job is a master and a ring of workers.
  EXPECT_TRUE(cluster.Pods("edl-job=ring,edl-role=ps").empty());

  std::string victim;
  for (const Json& p : cluster.Pods(workers + ",edl-process=worker-0")) victim = Name(p);
  ASSERT_FALSE(victim.empty());
  const int64_t before = cluster.ModelVersion("ring");
  ASSERT_TRUE(cluster.client().Delete(kube::Pods(), "default", victim, {}).ok());
  // The survivors go on, and the replacement pod joins the ring.
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion("ring") > before + 20; }, 120))
      << client.Out() << cluster.Log();

  RunResult r;
  ASSERT_TRUE(WaitFor([&] { return client.Exited(&r); }, 900)) << client.Out() << cluster.Log();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << cluster.Log();
  EXPECT_EQ(EpochsWithNothingMissing(r.out), 1) << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.80) << r.out;
  EXPECT_NE(r.out.find("the ring starts with 3 member(s)"), std::string::npos) << r.out;
  EXPECT_TRUE(WaitFor([&] { return cluster.Pods("edl-job=ring,edl-role!=master").empty(); }, 60));
}

TEST(EdlOnKube, StoppingTheJobRemovesEveryPodOfTheJob) {
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  std::vector<std::string> args = {"train"};
  for (auto& a : KubeJob(cluster, "gc",
                         {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
                          "--num_epochs=50", "--num_ps_pods=1", "--num_workers=2", "--detach"})) {
    args.push_back(a);
  }
  RunResult submitted = RunEdl(args);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_NE(submitted.out.find("submitted"), std::string::npos) << submitted.out;
  ASSERT_TRUE(WaitFor([&] { return cluster.Count("edl-job=gc", "Running") == 4; }, 120))
      << cluster.Log();

  // The job-control commands see it.
  RunResult list = RunEdl({"list", "--cluster=kube", "--kubeconfig=" + cluster.kubeconfig()});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("gc-master"), std::string::npos) << list.out;
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion("gc") > 0; }, 120));
  RunResult status =
      RunEdl({"status", "gc", "--cluster=kube", "--kubeconfig=" + cluster.kubeconfig()});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("model_version"), std::string::npos) << status.out;
  {
    // edl dashboard: the page and its data on a local port, relayed through
    // the service proxy (no job secret: RBAC on services/proxy guards it).
    EdlProcess dashboard(
        {"dashboard", "gc", "--cluster=kube", "--kubeconfig=" + cluster.kubeconfig()});
    std::smatch m;
    std::string out;
    ASSERT_TRUE(WaitFor(
        [&] {
          out = dashboard.Out();
          return std::regex_search(out, m, std::regex(R"(http://127\.0\.0\.1:([0-9]+)/)"));
        },
        30))
        << dashboard.Err();
    net::RpcChannel page("127.0.0.1", std::stoi(m[1]), "any");
    auto html = page.Get("/", net::Millis(10000));
    ASSERT_TRUE(html.ok()) << html.status().message();
    EXPECT_NE(html->find("<title>edl job</title>"), std::string::npos);
    auto relayed = page.Get("/status", net::Millis(10000));
    ASSERT_TRUE(relayed.ok()) << relayed.status().message();
    EXPECT_NE(relayed->find("\"job\":\"gc\""), std::string::npos) << *relayed;
    EXPECT_TRUE(page.Get("/series", net::Millis(10000)).ok());
    EXPECT_FALSE(page.Get("/metrics", net::Millis(10000)).ok());  // not relayed
  }
  RunResult waited = RunEdl(
      {"wait", "gc", "--timeout_s=1", "--cluster=kube", "--kubeconfig=" + cluster.kubeconfig()});
  EXPECT_EQ(waited.exit_code, 124) << waited.out << waited.err;  // still running
  EXPECT_NE(waited.err.find("job gc still running after 1 s"), std::string::npos) << waited.err;
  RunResult no_job =
      RunEdl({"dashboard", "nojob", "--cluster=kube", "--kubeconfig=" + cluster.kubeconfig()});
  EXPECT_NE(no_job.exit_code, 0);
  EXPECT_NE(no_job.err.find("nojob"), std::string::npos) << no_job.err;
  // worker-1's own log (its pod's), once it has registered.
  RunResult logs;
  EXPECT_TRUE(WaitFor(
      [&] {
        logs = RunEdl({"logs", "gc", "--process=worker-1", "--cluster=kube",
                       "--kubeconfig=" + cluster.kubeconfig()});
        return logs.exit_code == 0 &&
               logs.out.find("worker-1: registered as worker") != std::string::npos;
      },
      60))
      << logs.out << logs.err;

  // edl scale through the master (the API server's service proxy): a third
  // worker pod, then down to one; the PS count cannot change.
  auto scale = [&](const std::string& flag) {
    return RunEdl({"scale", "gc", flag, "--cluster=kube", "--kubeconfig=" + cluster.kubeconfig()});
  };
  const std::string workers = "edl-job=gc,edl-role=worker";
  RunResult up = scale("--num_workers=3");
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.out.find("job gc: scaling to 3 workers"), std::string::npos) << up.out;
  EXPECT_TRUE(WaitFor([&] { return cluster.Count(workers, "Running") == 3; }, 120))
      << cluster.Log();
  RunResult down = scale("--num_workers=1");
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_TRUE(
      WaitFor([&] { return cluster.Pods(workers + ",edl-process!=worker-0").empty(); }, 120))
      << cluster.Log();
  EXPECT_EQ(cluster.Count(workers, "Running"), 1);
  const int64_t scaled = cluster.ModelVersion("gc");
  EXPECT_TRUE(WaitFor([&] { return cluster.ModelVersion("gc") > scaled; }, 60));  // still training
  RunResult nope = RunEdl({"scale", "nope", "--num_workers=2", "--cluster=kube",
                           "--kubeconfig=" + cluster.kubeconfig()});
  EXPECT_NE(nope.exit_code, 0);
  EXPECT_NE(nope.err.find("job nope: no secret nope-secret in namespace default"),
            std::string::npos)
      << nope.err;
  RunResult ps = scale("--num_ps_pods=2");
  EXPECT_NE(ps.exit_code, 0);
  EXPECT_NE(ps.err.find("does not re-shard"), std::string::npos) << ps.err;

  // edl stop deletes the master's Job: the garbage collector removes the rest.
  RunResult stop = RunEdl({"stop", "gc", "--cluster=kube", "--kubeconfig=" + cluster.kubeconfig()});
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_NE(stop.out.find("deleted Job gc-master"), std::string::npos) << stop.out;
  EXPECT_TRUE(WaitFor([&] { return cluster.Pods("edl-job=gc").empty(); }, 120)) << cluster.Log();
  auto services = cluster.client().List(kube::Services(), "default",
                                        kube::ListOptions{"edl-job=gc", "", "", 500});
  ASSERT_TRUE(services.ok());
  EXPECT_TRUE((*services)["items"].empty()) << services->dump();
  EXPECT_EQ(cluster.client().Get(kube::ConfigMaps(), "default", "gc-config").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(cluster.client().Get(kube::Secrets(), "default", "gc-secret").status().code(),
            StatusCode::kNotFound);

  // Least privilege: every edl command but following a job to its end ran
  // here, and used every grant of Role edl-user but the ones other tests
  // take (kFollowingAJobToItsEnd, kTakingBackASubmit); the master, scaling up
  // and down, nothing its Role does not grant.
  EXPECT_EQ(UsedPermissions(cluster.Audit(kSubmitter)),
            Minus(Minus(RbacYamlGrants("edl-user"), kFollowingAJobToItsEnd), kTakingBackASubmit));
  const Permissions master_used = UsedPermissions(cluster.Audit(kMasterAccount));
  EXPECT_EQ(Minus(master_used, RbacYamlGrants("edl-master")), Permissions{});
  EXPECT_EQ(master_used.count("delete pods"), 1u);
}

// `edl train --yaml FILE` submits nothing; `kubectl apply -f FILE` (the
// installed kubectl, docs/kubernetes.md) creates the four objects and the
// job trains from them; `kubectl delete -f FILE` removes it, pods and all.
TEST(EdlOnKube, YamlWritesTheJobsObjectsAndKubectlCanCreateThem) {
  const std::string kubectl = KubectlPath();
  if (kubectl.empty()) EDL_SKIP_OR_FAIL_IN_CI(kNoKubectl);
  TempDir dir;
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  std::vector<std::string> args = {"train"};
  for (auto& a :
       KubeJob(cluster, "yamljob",
               {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain, "--num_epochs=1",
                "--num_ps_pods=1", "--num_workers=1", "--yaml=" + dir.File("job.yaml")})) {
    args.push_back(a);
  }
  RunResult r = RunEdl(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string yaml = ReadText(dir.File("job.yaml"));
  for (const char* kind :
       {"kind: \"Secret\"", "kind: \"ConfigMap\"", "kind: \"Job\"", "kind: \"Service\""}) {
    EXPECT_NE(yaml.find(kind), std::string::npos) << kind << "\n" << yaml;
  }
  // Nothing was submitted.
  EXPECT_TRUE(cluster.Pods("edl-job=yamljob").empty());

  int runs = 0;
  auto run_kubectl = [&](std::vector<std::string> kubectl_args) {
    // A person with more rights than Role edl-user grants: kubectl apply
    // also gets and patches what it creates.
    std::vector<std::string> full = {"--kubeconfig", cluster.admin_kubeconfig(), "--cache-dir",
                                     dir.File("kubectl-cache-" + std::to_string(++runs))};
    full.insert(full.end(), kubectl_args.begin(), kubectl_args.end());
    EdlProcess process(kubectl, full);
    RunResult result;
    if (!WaitFor([&] { return process.Exited(&result); }, 120)) {
      ADD_FAILURE() << "kubectl did not finish: " << process.Err();
    }
    return result;
  };
  RunResult applied = run_kubectl({"apply", "-f", dir.File("job.yaml")});
  ASSERT_EQ(applied.exit_code, 0) << applied.err << cluster.Log();
  EXPECT_EQ(applied.out,
            "secret/yamljob-secret created\nconfigmap/yamljob-config created\n"
            "job.batch/yamljob-master created\nservice/yamljob-master created\n");
  // The Job starts the master, which launches its PS and worker and trains.
  ASSERT_TRUE(WaitFor([&] { return cluster.ModelVersion("yamljob") > 0; }, 300)) << cluster.Log();
  EXPECT_EQ(cluster.Count("edl-job=yamljob,edl-role=worker", "Running"), 1);
  EXPECT_EQ(cluster.Count("edl-job=yamljob,edl-role=ps", "Running"), 1);

  RunResult deleted = run_kubectl({"delete", "-f", dir.File("job.yaml"), "--wait=false"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_NE(deleted.out.find("job.batch \"yamljob-master\" deleted"), std::string::npos)
      << deleted.out;
  EXPECT_TRUE(WaitFor([&] { return cluster.Pods("edl-job=yamljob").empty(); }, 120))
      << cluster.Log();
}

TEST(EdlOnKube, ShardedDataOnAVolumeIsLeftToThePodsAndDataOffEveryVolumeIsRefused) {
  TempDir dir;
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  auto run = [&](const std::string& name, const std::string& data) {
    std::vector<std::string> args = {"train"};
    for (auto& a :
         KubeJob(cluster, name,
                 {"--model_def=zoo:planted_deepfm", "--training_data=" + data,
                  "--volume=claim_name=datasets,mount_path=/data",
                  "--data_index_dir=/data/edl-index", "--yaml=" + dir.File(name + ".yaml")})) {
      args.push_back(a);
    }
    return RunEdl(args);
  };
  // Not on this machine, but on the volume: the pods resolve the glob.
  RunResult ok = run("shards", "/data/clicks/part-*.csv.gz,/data/more");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const std::string yaml = ReadText(dir.File("shards.yaml"));
  EXPECT_NE(yaml.find("--training_data=/data/clicks/part-*.csv.gz,/data/more"), std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("--data_index_dir=/data/edl-index"), std::string::npos) << yaml;
  // One part of the list is on no volume: refused, naming that part.
  RunResult bad = run("offvolume", "/data/clicks/part-*.csv.gz,/elsewhere/b.csv");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--training_data /elsewhere/b.csv: not found here and not under any "
                         "--volume mount_path the pods see"),
            std::string::npos)
      << bad.err;
  EXPECT_TRUE(cluster.Pods("").empty());
}

TEST(EdlOnKube, ABadFlagFailsBeforeAnythingIsCreated) {
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  for (const std::string& bad :
       {std::string("--worker_resource_request=cpu=lots"), std::string("--volume=mount_path=/data"),
        std::string("--job_name=Bad_Name")}) {
    const bool bad_name = bad.rfind("--job_name=", 0) == 0;
    std::vector<std::string> extra = {"--model_def=zoo:fashion_mnist_mlp",
                                      "--training_data=" + kTrain};
    if (!bad_name) extra.push_back(bad);
    std::vector<std::string> args = {"train"};
    for (auto& a : KubeJob(cluster, bad_name ? "Bad_Name" : "bad", extra)) args.push_back(a);
    RunResult r = RunEdl(args);
    EXPECT_NE(r.exit_code, 0) << bad;
    const std::string flag = bad.substr(0, bad.find('='));
    EXPECT_NE(r.err.find(flag), std::string::npos) << bad << ": " << r.err;
  }
  auto maps = cluster.client().List(kube::ConfigMaps(), "default", {});
  ASSERT_TRUE(maps.ok());
  EXPECT_TRUE((*maps)["items"].empty()) << maps->dump();
  EXPECT_TRUE(cluster.Pods("").empty());
}

}  // namespace
}  // namespace edl::testing
