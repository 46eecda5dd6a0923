// How many tensor-engine threads the master gives each PS and worker.
#include <gtest/gtest.h>

#include "roles/job/process_options.h"

namespace edl::roles::job {
namespace {

MasterProcessOptions LocalJob(int workers, int ps) {
  MasterProcessOptions o;
  o.num_workers = workers;
  o.num_ps = ps;
  return o;
}

TEST(ChildThreads, AnExplicitNumThreadsIsEveryProcesss) {
  MasterProcessOptions o = LocalJob(2, 2);
  o.model.num_threads = 3;
  EXPECT_EQ(ChildThreads(o, /*ps=*/true, 16), 3);
  EXPECT_EQ(ChildThreads(o, /*ps=*/false, 16), 3);
  o.kube.enabled = true;
  EXPECT_EQ(ChildThreads(o, /*ps=*/false, 16), 3);
}

TEST(ChildThreads, OnTheLocalClusterWorkersShareTheCoresAndPsCountAsWell) {
  EXPECT_EQ(ChildThreads(LocalJob(2, 2), false, 16), 8);
  EXPECT_EQ(ChildThreads(LocalJob(2, 2), true, 16), 4);
  EXPECT_EQ(ChildThreads(LocalJob(3, 1), true, 16), 4);
  EXPECT_EQ(ChildThreads(LocalJob(1, 1), false, 2), 2);  // a lone worker
  EXPECT_EQ(ChildThreads(LocalJob(1, 1), true, 2), 1);
  EXPECT_EQ(ChildThreads(LocalJob(2, 2), false, 2), 1);  // never 0
  EXPECT_EQ(ChildThreads(LocalJob(2, 2), true, 2), 1);
  MasterProcessOptions ring = LocalJob(4, 2);
  ring.allreduce = true;  // no PS: the workers share the cores
  EXPECT_EQ(ChildThreads(ring, false, 16), 4);
}

TEST(ChildEnv, OnTheLocalClusterOpenMpThreadsSpinBrieflyUnlessTheUserChose) {
  MasterProcessOptions o = LocalJob(1, 1);
  auto env = ChildEnv(o, /*user_tuned_openmp=*/false);
  ASSERT_EQ(env.count("GOMP_SPINCOUNT"), 1u);
  EXPECT_EQ(env["GOMP_SPINCOUNT"], "1000");
  EXPECT_TRUE(ChildEnv(o, /*user_tuned_openmp=*/true).empty());
  o.kube.enabled = true;
  EXPECT_TRUE(ChildEnv(o, /*user_tuned_openmp=*/false).empty());
}

TEST(ChildThreads, InAPodTheCpuLimitElseTheRequestRoundedUp) {
  MasterProcessOptions o = LocalJob(2, 1);
  o.kube.enabled = true;
  o.kube.worker_resource_request = "cpu=1,memory=4096Mi";
  o.kube.worker_resource_limit = "cpu=4,memory=4096Mi";
  o.kube.ps_resource_request = "cpu=1500m,memory=1Gi";
  o.kube.ps_resource_limit = "";
  EXPECT_EQ(ChildThreads(o, /*ps=*/false, 16), 4);
  EXPECT_EQ(ChildThreads(o, /*ps=*/true, 16), 2);
  // No CPU named: 0, and the process itself reads its cgroup (base/cpus.h).
  o.kube.worker_resource_limit = "memory=4096Mi";
  o.kube.worker_resource_request = "memory=4096Mi";
  EXPECT_EQ(ChildThreads(o, /*ps=*/false, 16), 0);
}

TEST(ChildThreads, EveryProcessGetsTheJobsLogLevelAndTheMasterItsProgressFlags) {
  MasterProcessOptions o = LocalJob(2, 1);
  o.job.log_level = "DEBUG";
  o.progress_bar = false;
  o.log_interval_s = 3;
  const std::string master = JoinArgs(ToArgs(o));
  EXPECT_NE(master.find("--log_level=DEBUG"), std::string::npos) << master;
  EXPECT_NE(master.find("--progress_bar=false"), std::string::npos) << master;
  EXPECT_NE(master.find("--log_interval=3"), std::string::npos) << master;
  PsProcessOptions p;
  p.job = o.job;
  EXPECT_NE(JoinArgs(ToArgs(p)).find("--log_level=DEBUG"), std::string::npos);
  WorkerProcessOptions w;
  w.job = o.job;
  EXPECT_NE(JoinArgs(ToArgs(w)).find("--log_level=DEBUG"), std::string::npos);
}

}  // namespace
}  // namespace edl::roles::job
