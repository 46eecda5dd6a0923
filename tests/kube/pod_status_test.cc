#include "kube/pod_status.h"

#include <gtest/gtest.h>

namespace edl::kube {
namespace {

using Json = nlohmann::json;
using Kind = PodFate::Kind;

Json Pod(const std::string& phase) {
  return {{"metadata", {{"name", "j-worker-0-1"}, {"uid", "u1"}}}, {"status", {{"phase", phase}}}};
}

Json Terminated(Json pod, int code, const std::string& reason) {
  pod["status"]["containerStatuses"] = Json::array(
      {{{"name", "main"}, {"state", {{"terminated", {{"exitCode", code}, {"reason", reason}}}}}}});
  return pod;
}

Json WithCondition(Json pod, const std::string& reason) {
  pod["status"]["conditions"] =
      Json::array({{{"type", "Ready"}, {"status", "False"}},
                   {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", reason}}});
  return pod;
}

TEST(ClassifyPod, PendingAndRunningPodsAreAlive) {
  EXPECT_EQ(ClassifyPod(Pod("Pending"), false, false).kind, Kind::kAlive);
  Json terminating = Pod("Running");
  terminating["metadata"]["deletionTimestamp"] = "2026-11-21T05:17:31Z";
  PodFate f = ClassifyPod(terminating, false, false);
  EXPECT_EQ(f.kind, Kind::kAlive);
  EXPECT_TRUE(f.terminating);
}

TEST(ClassifyPod, APreemptedPodIsDisruptedWhateverItsExitCode) {
  for (int code : {0, 143, 137}) {
    Json pod = WithCondition(Terminated(Pod("Failed"), code, "Error"), "PreemptionByScheduler");
    PodFate f = ClassifyPod(pod, true, false);
    EXPECT_EQ(f.kind, Kind::kDisrupted) << code;
    EXPECT_NE(f.detail.find("preempted"), std::string::npos) << f.detail;
  }
}

TEST(ClassifyPod, AKubeletEvictionThatLeavesThePodBehindIsDisrupted) {
  Json pod = Terminated(Pod("Failed"), 137, "Error");
  pod["status"]["reason"] = "Evicted";
  pod["status"]["message"] = "The node was low on resource: memory.";
  PodFate f = ClassifyPod(pod, false, false);
  EXPECT_EQ(f.kind, Kind::kDisrupted);
  EXPECT_NE(f.detail.find("Evicted"), std::string::npos);
}

TEST(ClassifyPod, OomKilledIsItsOwnFate) {
  PodFate f = ClassifyPod(Terminated(Pod("Failed"), 137, "OOMKilled"), false, false);
  EXPECT_EQ(f.kind, Kind::kOomKilled);
  EXPECT_EQ(f.exit_code, 137);
}

TEST(ClassifyPod, ExitCodesTellKillsFromApplicationFailures) {
  EXPECT_EQ(ClassifyPod(Terminated(Pod("Failed"), 137, "Error"), false, false).kind, Kind::kKilled);
  PodFate failed = ClassifyPod(Terminated(Pod("Failed"), 3, "Error"), false, false);
  EXPECT_EQ(failed.kind, Kind::kFailed);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_NE(failed.detail.find("exit code 3"), std::string::npos);
  EXPECT_EQ(ClassifyPod(Terminated(Pod("Succeeded"), 0, "Completed"), false, false).kind,
            Kind::kCompleted);
}

TEST(ClassifyPod, ADeletionBySomeoneElseIsADisruptionButOursIsNot) {
  Json pod = Terminated(Pod("Succeeded"), 0, "Completed");
  pod["metadata"]["deletionTimestamp"] = "2026-11-21T05:17:31Z";
  EXPECT_EQ(ClassifyPod(pod, true, false).kind, Kind::kDisrupted);
  EXPECT_EQ(ClassifyPod(pod, true, true).kind, Kind::kCompleted);
}

TEST(ClassifyPod, ADeletedPodWithNoTerminalStateIsGone) {
  EXPECT_EQ(ClassifyPod(Pod("Running"), true, false).kind, Kind::kGone);
}

TEST(ClassifyPod, MalformedPodsDoNotCrashIt) {
  for (const Json& pod : {Json(), Json::array(), Json{{"status", 3}},
                          Json{{"status", {{"phase", "Failed"}, {"containerStatuses", "x"}}}},
                          Json{{"status", {{"phase", "Failed"}, {"conditions", {1, 2}}}}}}) {
    PodFate f = ClassifyPod(pod, true, false);
    EXPECT_NE(f.kind, Kind::kAlive) << pod.dump();
  }
}

TEST(UnschedulableMessage, ReadsThePodScheduledFalseCondition) {
  Json pod = Pod("Pending");
  EXPECT_EQ(UnschedulableMessage(pod), "");
  pod["status"]["conditions"] =
      Json::array({{{"type", "PodScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", "0/2 nodes are available: 2 Insufficient cpu."}}});
  EXPECT_EQ(UnschedulableMessage(pod), "0/2 nodes are available: 2 Insufficient cpu.");
}

}  // namespace
}  // namespace edl::kube
