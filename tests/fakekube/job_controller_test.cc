// The fake cluster's Job controller (batch/v1), pass by pass on an
// in-process store: a pod from the template with the Job's labels and owner,
// a failed pod replaced after the back-off and counted, a disrupted one
// replaced at once without counting, the backoff limit failing the Job,
// success completing it, and the API's defaults and validation.
#include "tests/fakekube/server/job_controller.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {
namespace {

Json MasterJob(int backoff_limit, bool ignore_disruptions) {
  Json spec = {
      {"backoffLimit", backoff_limit},
      {"template",
       {{"metadata", {{"labels", {{"edl-role", "master"}}}}},
        {"spec",
         {{"restartPolicy", "Never"}, {"containers", {{{"name", "main"}, {"image", "edl"}}}}}}}}};
  if (ignore_disruptions) {
    spec["podFailurePolicy"] = {
        {"rules",
         {{{"action", "Ignore"},
           {"onPodConditions", {{{"type", "DisruptionTarget"}, {"status", "True"}}}}}}}};
  }
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "j-master"}}},
          {"spec", spec}};
}

class JobControllerTest : public ::testing::Test {
 protected:
  JobControllerTest()
      : controller_(store_, {std::chrono::milliseconds(200), std::chrono::seconds(2)}) {}

  std::vector<Json> Pods() {
    return store_.List("pods", "default", "job-name=j-master", "").value->items;
  }
  Json Job() { return *store_.Get("jobs", "default", "j-master").value; }
  void SetPhase(const Json& pod, const std::string& phase, bool disrupted = false) {
    ASSERT_TRUE(store_
                    .Update("pods", "default", pod["metadata"]["name"],
                            [&](Json& p) {
                              p["status"]["phase"] = phase;
                              if (disrupted) {
                                p["status"]["conditions"] = {{{"type", "DisruptionTarget"},
                                                              {"status", "True"},
                                                              {"reason", "PreemptionByScheduler"}}};
                              }
                            })
                    .ok());
  }

  Store store_;
  JobController controller_;
};

TEST_F(JobControllerTest, CreatesOnePodFromTheTemplateOwnedByTheJob) {
  ASSERT_TRUE(store_.Create("jobs", "default", MasterJob(6, false)).ok());
  const Json job = Job();
  EXPECT_EQ(job["spec"]["completions"], 1);
  EXPECT_EQ(job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
            job["metadata"]["uid"]);
  controller_.RunOnce();
  controller_.RunOnce();  // nothing more while one is active
  const std::vector<Json> pods = Pods();
  ASSERT_EQ(pods.size(), 1u);
  const Json& pod = pods[0];
  EXPECT_EQ(pod["metadata"]["name"].get<std::string>().rfind("j-master-", 0), 0u);
  EXPECT_EQ(pod["metadata"]["labels"]["edl-role"], "master");
  EXPECT_EQ(pod["metadata"]["labels"]["controller-uid"], job["metadata"]["uid"]);
  const Json& owner = pod["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Job");
  EXPECT_EQ(owner["uid"], job["metadata"]["uid"]);
  EXPECT_TRUE(owner["controller"].get<bool>());
  EXPECT_EQ(Job()["status"]["active"], 1);
}

TEST_F(JobControllerTest, AFailedPodIsCountedAndReplacedAfterTheBackOff) {
  ASSERT_TRUE(store_.Create("jobs", "default", MasterJob(6, false)).ok());
  controller_.RunOnce();
  SetPhase(Pods()[0], "Failed");
  const auto failed_at = std::chrono::steady_clock::now();
  controller_.RunOnce();
  EXPECT_EQ(Job()["status"]["failed"], 1);
  EXPECT_EQ(Pods().size(), 1u);  // no replacement yet: the back-off
  while (Pods().size() < 2) {
    controller_.RunOnce();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(std::chrono::steady_clock::now() - failed_at, std::chrono::milliseconds(200));
}

TEST_F(JobControllerTest, ADisruptedPodIsReplacedAtOnceWithoutCountingWhenThePolicySays) {
  ASSERT_TRUE(store_.Create("jobs", "default", MasterJob(0, true)).ok());
  controller_.RunOnce();
  SetPhase(Pods()[0], "Failed", /*disrupted=*/true);
  controller_.RunOnce();
  EXPECT_EQ(Pods().size(), 2u);
  EXPECT_FALSE(Job()["status"].contains("failed"));
  EXPECT_FALSE(Job()["status"].contains("conditions"));
}

TEST_F(JobControllerTest, APodThatExitedWithAnIgnoredCodeIsReplacedAtOnceWithoutCounting) {
  Json job = MasterJob(0, false);
  job["spec"]["podFailurePolicy"] = {
      {"rules", {{{"action", "Ignore"}, {"onExitCodes", {{"operator", "In"}, {"values", {75}}}}}}}};
  ASSERT_TRUE(store_.Create("jobs", "default", job).ok());
  controller_.RunOnce();
  ASSERT_TRUE(
      store_
          .Update("pods", "default", Pods()[0]["metadata"]["name"],
                  [](Json& p) {
                    p["status"]["phase"] = "Failed";
                    p["status"]["containerStatuses"] = {
                        {{"name", "main"}, {"state", {{"terminated", {{"exitCode", 75}}}}}}};
                  })
          .ok());
  controller_.RunOnce();
  EXPECT_EQ(Pods().size(), 2u);
  EXPECT_FALSE(Job()["status"].contains("failed"));
}

TEST_F(JobControllerTest, AFailJobRuleFailsTheJobAtOnce) {
  Json job = MasterJob(10, false);
  job["spec"]["podFailurePolicy"] = {
      {"rules", {{{"action", "FailJob"}, {"onExitCodes", {{"operator", "In"}, {"values", {1}}}}}}}};
  ASSERT_TRUE(store_.Create("jobs", "default", job).ok());
  controller_.RunOnce();
  ASSERT_TRUE(store_
                  .Update("pods", "default", Pods()[0]["metadata"]["name"],
                          [](Json& p) {
                            p["status"]["phase"] = "Failed";
                            p["status"]["containerStatuses"] = {
                                {{"name", "main"}, {"state", {{"terminated", {{"exitCode", 1}}}}}}};
                          })
                  .ok());
  controller_.RunOnce();
  const Json status = Job()["status"];
  ASSERT_TRUE(status.contains("conditions")) << status.dump();
  EXPECT_EQ(status["conditions"][0]["reason"], "PodFailurePolicy");
  EXPECT_NE(status["conditions"][0]["message"].get<std::string>().find(
                "failed with exit code 1 matching FailJob rule at index 0"),
            std::string::npos);
  EXPECT_EQ(Pods().size(), 1u);  // not replaced
}

TEST_F(JobControllerTest, APodKilledAndRemovedAtOnceIsStillCountedThanksToItsFinalizer) {
  ASSERT_TRUE(store_.Create("jobs", "default", MasterJob(0, true)).ok());
  controller_.RunOnce();
  // The kubelet writes the end, then removes the pod; the finalizer holds
  // it until the controller has counted it.
  SetPhase(Pods()[0], "Failed");
  ASSERT_TRUE(store_.Remove("pods", "default", Pods()[0]["metadata"]["name"]).ok());
  ASSERT_EQ(Pods().size(), 1u);
  controller_.RunOnce();
  const Json job = Job();
  EXPECT_EQ(job["status"]["failed"], 1);
  ASSERT_TRUE(job["status"].contains("conditions")) << job.dump();
  EXPECT_EQ(job["status"]["conditions"][0]["type"], "Failed");
  EXPECT_EQ(job["status"]["conditions"][0]["reason"], "BackoffLimitExceeded");
  EXPECT_TRUE(Pods().empty());
}

TEST_F(JobControllerTest, BeyondTheBackoffLimitTheJobFailsAndItsActivePodIsDeleted) {
  ASSERT_TRUE(store_.Create("jobs", "default", MasterJob(1, false)).ok());
  controller_.RunOnce();
  SetPhase(Pods()[0], "Failed");
  while (Pods().size() < 2) controller_.RunOnce();
  for (const Json& p : Pods()) {
    if (p["status"].value("phase", "") != "Failed") SetPhase(p, "Failed");
  }
  controller_.RunOnce();
  const Json job = Job();
  EXPECT_EQ(job["status"]["failed"], 2);
  EXPECT_EQ(job["status"]["conditions"][0]["message"],
            "Job has reached the specified backoff limit");
  controller_.RunOnce();
  EXPECT_EQ(Pods().size(), 2u);  // failed pods stay for inspection; none new
}

TEST_F(JobControllerTest, ASucceededPodCompletesTheJob) {
  ASSERT_TRUE(store_.Create("jobs", "default", MasterJob(6, false)).ok());
  controller_.RunOnce();
  SetPhase(Pods()[0], "Succeeded");
  controller_.RunOnce();
  const Json job = Job();
  EXPECT_EQ(job["status"]["succeeded"], 1);
  EXPECT_EQ(job["status"]["conditions"][0]["type"], "Complete");
  EXPECT_TRUE(job["status"].contains("completionTime"));
}

TEST_F(JobControllerTest, ATemplateThatRestartsAlwaysIsRefusedAsTheApiServerDoes) {
  Json job = MasterJob(6, false);
  job["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  auto r = store_.Create("jobs", "default", job);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.code, 422);
  EXPECT_NE(r.error.message.find("spec.template.spec.restartPolicy: Required value: valid values: "
                                 "\"OnFailure\", \"Never\""),
            std::string::npos)
      << r.error.message;
}

}  // namespace
}  // namespace edl::fakekube
