// Tests for the fake cluster's scheduler: placement by requests, the
// Unschedulable condition, priority order and preemption.
#include "tests/fakekube/server/scheduler.h"

#include <gtest/gtest.h>

#include "tests/fakekube/pod_fixtures.h"
#include "tests/fakekube/server/kubelet.h"
#include "tests/fakekube/server/pod_conditions.h"

namespace edl::fakekube {
namespace {

using testing::Create;
using testing::CreatePriorityClass;
using testing::GetPod;
using testing::ResourcePod;
using testing::WaitUntil;

std::vector<NodeSpec> Nodes(const std::string& text) {
  Result<std::vector<NodeSpec>> nodes = ParseNodeSpecs(text);
  EDL_CHECK(nodes.ok()) << nodes.status().message();
  return *nodes;
}

std::string NodeOf(const Json& pod) { return pod["spec"].value("nodeName", std::string()); }

std::string ResourceVersion(const Json& pod) {
  return pod["metadata"].value("resourceVersion", std::string());
}

TEST(Scheduler, BindsAPodToTheFirstNodeWithRoom) {
  Store store;
  Scheduler scheduler(store, {Nodes("node-a:cpu=1,memory=1Gi;node-b:cpu=4,memory=8Gi")});
  Create(store, "pods", ResourcePod("big", "2"));
  Create(store, "pods", ResourcePod("small", "500m"));
  scheduler.RunOnce();
  Json big = GetPod(store, "big");
  EXPECT_EQ(NodeOf(big), "node-b");
  const Json* scheduled = FindPodCondition(big, "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ((*scheduled)["status"], "True");
  EXPECT_EQ(NodeOf(GetPod(store, "small")), "node-a");
}

TEST(Scheduler, CountsBoundPodsAgainstTheNodeCapacity) {
  Store store;
  Scheduler scheduler(store, {Nodes("node-a:cpu=2")});
  Create(store, "pods", ResourcePod("one", "1500m"));
  scheduler.RunOnce();
  Create(store, "pods", ResourcePod("two", "1"));
  scheduler.RunOnce();
  EXPECT_EQ(NodeOf(GetPod(store, "one")), "node-a");
  EXPECT_EQ(NodeOf(GetPod(store, "two")), "");
}

TEST(Scheduler, FallsBackToLimitsWhenAContainerGivesNoRequests) {
  Store store;
  Scheduler scheduler(store, {Nodes("node-a:cpu=4,memory=1Gi")});
  Json pod = ResourcePod("limited", "1");
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"memory", "2Gi"}}}};
  Create(store, "pods", pod);
  scheduler.RunOnce();
  Json stored = GetPod(store, "limited");
  EXPECT_EQ(NodeOf(stored), "");
  const Json* scheduled = FindPodCondition(stored, "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ((*scheduled)["message"].get<std::string>().rfind(
                "0/1 nodes are available: 1 Insufficient memory.", 0),
            0u);
}

TEST(Scheduler, LeavesAPodPendingAndUnschedulableWhenNothingFits) {
  Store store;
  Scheduler scheduler(store, {Nodes("node-a:cpu=1;node-b:cpu=1")});
  Create(store, "pods", ResourcePod("huge", "2"));
  scheduler.RunOnce();
  Json pod = GetPod(store, "huge");
  EXPECT_EQ(NodeOf(pod), "");
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  const Json* scheduled = FindPodCondition(pod, "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ((*scheduled)["status"], "False");
  EXPECT_EQ((*scheduled)["reason"], "Unschedulable");
  EXPECT_EQ((*scheduled)["message"],
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are "
            "available: 2 No preemption victims found for incoming pod.");
  // Said once: another pass writes nothing.
  scheduler.RunOnce();
  EXPECT_EQ(ResourceVersion(GetPod(store, "huge")), ResourceVersion(pod));
}

TEST(Scheduler, SchedulesHigherPriorityPodsFirst) {
  Store store;
  CreatePriorityClass(store, "low", 10);
  CreatePriorityClass(store, "high", 1000);
  Scheduler scheduler(store, {Nodes("node-a:cpu=1")});
  Create(store, "pods", ResourcePod("first-but-low", "1", "low"));
  Create(store, "pods", ResourcePod("second-but-high", "1", "high"));
  scheduler.RunOnce();
  EXPECT_EQ(NodeOf(GetPod(store, "second-but-high")), "node-a");
  EXPECT_EQ(NodeOf(GetPod(store, "first-but-low")), "");
}

TEST(Scheduler, DoesNotPreemptForAPodWhosePolicyIsNever) {
  Store store;
  CreatePriorityClass(store, "low", 10);
  CreatePriorityClass(store, "polite", 1000, "Never");
  Scheduler scheduler(store, {Nodes("node-a:cpu=1")});
  Create(store, "pods", ResourcePod("low", "1", "low"));
  scheduler.RunOnce();
  Create(store, "pods", ResourcePod("polite", "1", "polite"));
  scheduler.RunOnce();
  EXPECT_FALSE(IsDeleting(GetPod(store, "low")));
  Json polite = GetPod(store, "polite");
  const Json* scheduled = FindPodCondition(polite, "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_NE((*scheduled)["message"].get<std::string>().find(
                "preemption: not eligible due to preemptionPolicy=Never."),
            std::string::npos);
}

TEST(Scheduler, PreemptsTheFewestLowestPriorityPodsAndBindsOnceTheyAreGone) {
  Store store;
  CreatePriorityClass(store, "lowest", 10);
  CreatePriorityClass(store, "low", 20);
  CreatePriorityClass(store, "high", 1000);
  Scheduler scheduler(store, {Nodes("node-a:cpu=2")});
  Create(store, "pods", ResourcePod("lowest", "1", "lowest"));
  Create(store, "pods", ResourcePod("low", "1", "low"));
  scheduler.RunOnce();
  ASSERT_EQ(NodeOf(GetPod(store, "lowest")), "node-a");
  ASSERT_EQ(NodeOf(GetPod(store, "low")), "node-a");

  Create(store, "pods", ResourcePod("high", "1", "high"));
  scheduler.RunOnce();
  Json victim = GetPod(store, "lowest");
  EXPECT_TRUE(IsDeleting(victim));
  const Json* disruption = FindPodCondition(victim, "DisruptionTarget");
  ASSERT_NE(disruption, nullptr);
  EXPECT_EQ((*disruption)["reason"], "PreemptionByScheduler");
  EXPECT_EQ((*disruption)["message"],
            "default-scheduler: preempting to accommodate a higher priority pod");
  Json spared = GetPod(store, "low");
  EXPECT_FALSE(IsDeleting(spared));
  EXPECT_EQ(FindPodCondition(spared, "DisruptionTarget"), nullptr);
  Json high = GetPod(store, "high");
  EXPECT_EQ(NodeOf(high), "");  // the victim's resources count until it is gone
  EXPECT_EQ(high["status"].value("nominatedNodeName", std::string()), "node-a");

  // Another pass neither picks more victims nor touches the terminating one.
  scheduler.RunOnce();
  EXPECT_EQ(ResourceVersion(GetPod(store, "lowest")), ResourceVersion(victim));
  EXPECT_FALSE(IsDeleting(GetPod(store, "low")));
  EXPECT_EQ(NodeOf(GetPod(store, "high")), "");

  ASSERT_TRUE(store.Remove("pods", "default", "lowest").ok());  // the kubelet's final delete
  scheduler.RunOnce();
  EXPECT_EQ(NodeOf(GetPod(store, "high")), "node-a");
}

TEST(Scheduler, PreemptionShowsAWatcherTheSequenceOfARealCluster) {
  Store store;
  CreatePriorityClass(store, "low", 10);
  CreatePriorityClass(store, "high", 1000);
  std::vector<NodeSpec> nodes = Nodes("node-a:cpu=1");
  Scheduler scheduler(store, {nodes});
  Kubelet::Options options;
  options.nodes = {"node-a"};
  options.images = {{"shell", "/bin"}};
  Kubelet kubelet(store, options);
  ASSERT_TRUE(kubelet.Start().ok());
  scheduler.Start();

  testing::PodEventLog log(store, "worker");
  Create(store, "pods", [] {
    Json pod = ResourcePod("worker", "1", "low");
    pod["spec"]["containers"][0]["command"] = {"/bin/sleep", "1000"};
    return pod;
  }());
  ASSERT_TRUE(WaitUntil([&] { return testing::PodPhaseOf(GetPod(store, "worker")) == "Running"; }));
  const size_t running_events = log.Events().size();

  Create(store, "pods", ResourcePod("master", "1", "high"));
  ASSERT_TRUE(WaitUntil([&] { return testing::PodPhaseOf(GetPod(store, "master")) == "Running"; }));
  EXPECT_EQ(NodeOf(GetPod(store, "master")), "node-a");

  std::vector<WatchEvent> events = log.Events();
  ASSERT_EQ(events.size(), running_events + 4);
  const WatchEvent& marked = events[running_events];
  const WatchEvent& deleting = events[running_events + 1];
  const WatchEvent& terminal = events[running_events + 2];
  const WatchEvent& deleted = events[running_events + 3];
  EXPECT_EQ(marked.type, "MODIFIED");
  ASSERT_NE(FindPodCondition(marked.object, "DisruptionTarget"), nullptr);
  EXPECT_FALSE(IsDeleting(marked.object));
  EXPECT_EQ(PodPhase(marked.object), "Running");
  EXPECT_EQ(deleting.type, "MODIFIED");
  EXPECT_TRUE(IsDeleting(deleting.object));
  EXPECT_EQ(deleting.object["metadata"]["deletionGracePeriodSeconds"], 10);
  EXPECT_EQ(terminal.type, "MODIFIED");
  EXPECT_EQ(PodPhase(terminal.object), "Failed");
  EXPECT_EQ(testing::Terminated(terminal.object)["exitCode"], 143);
  EXPECT_EQ(deleted.type, "DELETED");
  EXPECT_EQ(PodPhase(deleted.object), "Failed");
  scheduler.Stop();
  kubelet.Stop();
}

}  // namespace
}  // namespace edl::fakekube
