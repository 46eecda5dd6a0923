// The fake API server refuses what kube-apiserver refuses, over HTTPS as a
// client sees it: 422 Invalid, details {name, kind, causes} naming each
// field, for the fields the API's OpenAPI schema marks required in the
// kinds edl creates; and it accepts the objects edl's client submits.
#include <gtest/gtest.h>

#include <iterator>

#include "roles/job/kube_job.h"
#include "tests/fakekube/loopback_api_server.h"

namespace edl::fakekube {
namespace {

using testing::HttpResult;
using testing::LoopbackApiServer;

constexpr char kJobs[] = "/apis/batch/v1/namespaces/default/jobs";
constexpr char kPods[] = "/api/v1/namespaces/default/pods";

Json MasterLikeJob() {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "j-master"}}},
          {"spec",
           {{"podReplacementPolicy", "Failed"},
            {"podFailurePolicy",
             {{"rules",
               {{{"action", "Ignore"},
                 {"onPodConditions", {{{"type", "DisruptionTarget"}, {"status", "True"}}}}}}}}},
            {"template",
             {{"spec",
               {{"restartPolicy", "Never"},
                {"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}}}}}};
}

Json Pod() {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "w-0"}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}};
}

// The message of the cause naming `field` in a 422 Status, or "" if none.
std::string Cause(const HttpResult& r, const std::string& field) {
  const Json status = r.json();
  if (!status.is_object() || !status.contains("details")) return "";
  for (const Json& c : status["details"].value("causes", Json::array())) {
    if (c.value("field", "") == field) return c.value("message", "");
  }
  return "";
}

class ValidationTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(api_.Start().ok()); }

  HttpResult Post(const std::string& path, const Json& object) {
    return api_.Send("POST", path, object.dump());
  }

  LoopbackApiServer api_;
};

TEST_F(ValidationTest, AJobWhoseOnPodConditionsEntryLacksAStatusIsRefusedNamingTheField) {
  Json job = MasterLikeJob();
  job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0].erase("status");
  HttpResult r = Post(kJobs, job);
  ASSERT_EQ(r.status, 422) << r.body;
  const Json status = r.json();
  EXPECT_EQ(status["reason"], "Invalid");
  EXPECT_EQ(status["details"]["kind"], "Job");
  EXPECT_EQ(status["details"]["group"], "batch");
  EXPECT_EQ(status["details"]["name"], "j-master");
  ASSERT_EQ(status["details"]["causes"].size(), 1u) << r.body;
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "FieldValueRequired");
  EXPECT_EQ(status["message"],
            "Job.batch \"j-master\" is invalid: "
            "spec.podFailurePolicy.rules[0].onPodConditions[0].status: "
            "Required value: valid values: [\"False\" \"True\" \"Unknown\"]");
  EXPECT_FALSE(api_.store().Get("jobs", "default", "j-master").ok());
}

TEST_F(ValidationTest, TheObjectsEdlSubmitsForAJobAreAcceptedAndItsDisruptionRuleSaysStatusTrue) {
  roles::job::MasterProcessOptions m;
  m.job.job_name = "mnist";
  m.model.model_def = "zoo:mnist_mlp";
  m.training_data = "/data/train";
  m.kube.volume = "claim_name=data,mount_path=/data";
  m.kube.envs = "A=1";
  auto manifests = roles::job::BuildKubeJobManifests(m, "secret");
  ASSERT_TRUE(manifests.ok()) << manifests.status().message();
  const std::pair<const char*, const char*> paths[] = {
      {"Secret", "/api/v1/namespaces/default/secrets"},
      {"ConfigMap", "/api/v1/namespaces/default/configmaps"},
      {"Job", kJobs},
      {"Service", "/api/v1/namespaces/default/services"}};
  ASSERT_EQ(manifests->size(), std::size(paths));
  for (size_t i = 0; i < manifests->size(); ++i) {
    const Json object = Json::parse((*manifests)[i]);
    ASSERT_EQ(object["kind"], paths[i].first);
    HttpResult r = Post(paths[i].second, object);
    EXPECT_EQ(r.status, 201) << paths[i].first << ": " << r.body;
  }
  auto job = api_.store().Get("jobs", "default", "mnist-master");
  ASSERT_TRUE(job.ok());
  const Json& rule = (*job.value)["spec"]["podFailurePolicy"]["rules"][0];
  EXPECT_EQ(rule["action"], "Ignore");
  EXPECT_EQ(rule["onPodConditions"][0]["type"], "DisruptionTarget");
  EXPECT_EQ(rule["onPodConditions"][0]["status"], "True");
}

TEST_F(ValidationTest, APodFailurePolicyRuleNeedsAKnownActionAndExactlyOneMatcher) {
  Json job = MasterLikeJob();
  job["spec"]["podFailurePolicy"]["rules"] = {
      {{"onPodConditions", {{{"type", "DisruptionTarget"}, {"status", "Maybe"}}}},
       {"onExitCodes", {{"operator", "In"}, {"values", {1}}}}},
      {{"action", "Retry"}}};
  HttpResult r = Post(kJobs, job);
  ASSERT_EQ(r.status, 422) << r.body;
  const std::string rules = "spec.podFailurePolicy.rules";
  EXPECT_EQ(Cause(r, rules + "[0].action"),
            "Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]");
  EXPECT_EQ(Cause(r, rules + "[0].onPodConditions[0].status"),
            "Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"");
  EXPECT_EQ(Cause(r, rules + "[0]"),
            "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported");
  EXPECT_EQ(Cause(r, rules + "[1].action"),
            "Unsupported value: \"Retry\": supported values: \"Count\", \"FailIndex\", "
            "\"FailJob\", \"Ignore\"");
  EXPECT_EQ(Cause(r, rules + "[1]"),
            "Invalid value: specifying one of OnExitCodes and OnPodConditions is required");
}

TEST_F(ValidationTest, OnExitCodesNeedAnOperatorAndOrderedValuesWithoutZeroForIn) {
  Json job = MasterLikeJob();
  job["spec"]["podFailurePolicy"]["rules"] = {
      {{"action", "FailJob"}, {"onExitCodes", {{"values", Json::array()}}}},
      {{"action", "FailJob"}, {"onExitCodes", {{"operator", "In"}, {"values", {2, 0}}}}}};
  HttpResult r = Post(kJobs, job);
  ASSERT_EQ(r.status, 422) << r.body;
  const std::string rules = "spec.podFailurePolicy.rules";
  EXPECT_EQ(Cause(r, rules + "[0].onExitCodes.operator"),
            "Required value: valid values: [\"In\" \"NotIn\"]");
  EXPECT_EQ(Cause(r, rules + "[0].onExitCodes.values"),
            "Invalid value: []int32{}: at least one value is required");
  EXPECT_EQ(Cause(r, rules + "[1].onExitCodes.values[1]"),
            "Invalid value: 0: must not be 0 for the In operator");
  EXPECT_EQ(Cause(r, rules + "[1].onExitCodes.values"),
            "Invalid value: []int32{2, 0}: must be ordered");
}

TEST_F(ValidationTest, AJobWithAPodFailurePolicyRestartsNeverAndNoJobRestartsAlways) {
  Json on_failure = MasterLikeJob();
  on_failure["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure";
  HttpResult r = Post(kJobs, on_failure);
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Cause(r, "spec.template.spec.restartPolicy"),
            "Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is "
            "specified");
  Json defaulted = MasterLikeJob();
  defaulted["spec"].erase("podFailurePolicy");
  defaulted["spec"]["template"]["spec"].erase("restartPolicy");
  r = Post(kJobs, defaulted);
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Cause(r, "spec.template.spec.restartPolicy"),
            "Required value: valid values: \"OnFailure\", \"Never\"");
}

TEST_F(ValidationTest, AJobWithoutATemplateIsRefusedForThePodSpecItLacks) {
  Json job = MasterLikeJob();
  job["spec"].erase("template");
  HttpResult r = Post(kJobs, job);
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Cause(r, "spec.template.spec.containers"), "Required value");
  EXPECT_EQ(Cause(r, "spec.template.spec.restartPolicy"),
            "Required value: valid values: \"OnFailure\", \"Never\"");
}

TEST_F(ValidationTest, APodIsRefusedForEachRequiredFieldItsContainersAndVolumesLack) {
  Json pod = Pod();
  Json& c = pod["spec"]["containers"][0];
  c["env"] = {{{"value", "x"}},
              {{"name", "POD_IP"}, {"valueFrom", {{"fieldRef", Json::object()}}}}};
  c["ports"] = {{{"name", "rpc"}}};
  c["volumeMounts"] = {{{"name", "data"}}, {{"name", "cfg"}, {"mountPath", "/etc/edl"}}};
  pod["spec"]["volumes"] = {{{"name", "data"}}, {{"name", "claim"}, {"persistentVolumeClaim", {}}}};
  HttpResult r = Post(kPods, pod);
  ASSERT_EQ(r.status, 422) << r.body;
  const std::string at = "spec.containers[0]";
  EXPECT_EQ(Cause(r, at + ".env[0].name"), "Required value");
  EXPECT_EQ(Cause(r, at + ".env[1].valueFrom.fieldRef.fieldPath"), "Required value");
  EXPECT_EQ(Cause(r, at + ".ports[0].containerPort"), "Required value");
  EXPECT_EQ(Cause(r, at + ".volumeMounts[0].mountPath"), "Required value");
  EXPECT_EQ(Cause(r, at + ".volumeMounts[1].name"), "Not found: \"cfg\"");
  EXPECT_EQ(Cause(r, "spec.volumes[0]"), "Required value: must specify a volume type");
  EXPECT_EQ(Cause(r, "spec.volumes[1].persistentVolumeClaim.claimName"), "Required value");
}

TEST_F(ValidationTest, AnOwnerReferenceNeedsApiVersionKindNameAndUid) {
  Json cm = {{"metadata",
              {{"name", "j-config"},
               {"ownerReferences", {{{"apiVersion", "batch/v1"}, {"kind", "Job"}}}}}}};
  HttpResult r = Post("/api/v1/namespaces/default/configmaps", cm);
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Cause(r, "metadata.ownerReferences.name"),
            "Invalid value: \"\": name must not be empty");
  EXPECT_EQ(Cause(r, "metadata.ownerReferences.uid"), "Invalid value: \"\": uid must not be empty");
}

TEST_F(ValidationTest, ConfigMapAndSecretKeysMustBeValidConfigKeys) {
  Json cm = {{"metadata", {{"name", "j-config"}}}, {"data", {{"model/spec.json", "{}"}}}};
  HttpResult r = Post("/api/v1/namespaces/default/configmaps", cm);
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Cause(r, "data[model/spec.json]")
                .rfind("Invalid value: \"model/spec.json\": a valid "
                       "config key must consist of alphanumeric",
                       0),
            0u)
      << r.body;
  Json secret = {{"metadata", {{"name", "j-secret"}}}, {"data", {{"..secret", "eA=="}}}};
  r = Post("/api/v1/namespaces/default/secrets", secret);
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Cause(r, "data[..secret]"), "Invalid value: \"..secret\": must not start with '..'");
}

TEST_F(ValidationTest, AnUpdateThatRemovesARequiredFieldIsRefusedAndChangesNothing) {
  ASSERT_EQ(Post(kJobs, MasterLikeJob()).status, 201);
  const std::string path = std::string(kJobs) + "/j-master";
  HttpResult r = api_.Send(
      "PATCH", path,
      R"([{"op":"remove","path":"/spec/podFailurePolicy/rules/0/onPodConditions/0/status"}])",
      "application/json-patch+json");
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Cause(r, "spec.podFailurePolicy.rules[0].onPodConditions[0].status"),
            "Required value: valid values: [\"False\" \"True\" \"Unknown\"]");
  auto stored = api_.store().Get("jobs", "default", "j-master");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored.value)["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True");
}

}  // namespace
}  // namespace edl::fakekube
