// The fake API server's CRUD over HTTPS: create, get, list, delete, put
// and the three patch types, with the errors kube-apiserver answers
// (malformed bodies, conflicts, preconditions, resource versions,
// selectors).
#include <gtest/gtest.h>

#include "tests/fakekube/api_server_fixture.h"
#include "tests/fakekube/server/api_server.h"

namespace edl::fakekube {
namespace {

using testing::ApiServerTest;

TEST_F(ApiServerTest, CreatesGetsListsAndDeletesPods) {
  Json created = CreatePod("w-0");
  EXPECT_EQ(created["kind"], "Pod");
  EXPECT_EQ(created["metadata"]["namespace"], "default");
  auto got = Send("GET", "/api/v1/namespaces/default/pods/w-0");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.json()["metadata"]["uid"], created["metadata"]["uid"]);
  auto list = Send("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dedl&limit=500");
  ASSERT_EQ(list.status, 200);
  Json l = list.json();
  EXPECT_EQ(l["kind"], "PodList");
  EXPECT_EQ(l["metadata"]["resourceVersion"], std::to_string(store().CurrentResourceVersion()));
  ASSERT_EQ(l["items"].size(), 1u);
  EXPECT_FALSE(l["items"][0].contains("kind"));
  EXPECT_EQ(Send("GET", "/api/v1/pods").json()["items"].size(), 1u);  // all namespaces
  auto deleted = Send("DELETE", "/api/v1/namespaces/default/pods/w-0",
                      R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.json()["kind"], "Pod");
  auto gone = Send("GET", "/api/v1/namespaces/default/pods/w-0");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.json()["message"], "pods \"w-0\" not found");
}

TEST_F(ApiServerTest, CreateRefusesMalformedBodiesAndReportsStoreErrors) {
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", "{not json").status, 400);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", "[1,2]").status, 400);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods?dryRun=All", Pod("dry").dump()).status,
            400);  // refused rather than done for real
  Json cm = {{"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}};
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", cm.dump()).status, 400);
  CreatePod("w-0");
  auto again = Send("POST", "/api/v1/namespaces/default/pods", Pod("w-0").dump());
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.json()["reason"], "AlreadyExists");
  Json invalid = Pod("w-1");
  invalid["spec"].erase("containers");
  auto refused = Send("POST", "/api/v1/namespaces/default/pods", invalid.dump());
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(refused.json()["message"], "Pod \"w-1\" is invalid: spec.containers: Required value");
}

TEST_F(ApiServerTest, DeleteHonoursQueryAndBodyOptions) {
  CreatePod("w-0");
  StartContainer("w-0");
  auto graceful = Send("DELETE", "/api/v1/namespaces/default/pods/w-0");
  ASSERT_EQ(graceful.status, 200);
  EXPECT_EQ(graceful.json()["metadata"]["deletionGracePeriodSeconds"], 30);
  auto conflict =
      Send("DELETE", "/api/v1/namespaces/default/pods/w-0", R"({"preconditions":{"uid":"other"}})");
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.json()["reason"], "Conflict");
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/w-0?gracePeriodSeconds=0").status, 200);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0").status, 404);
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/configmaps",
                 R"({"metadata":{"name":"c"},"data":{"a":"b"}})")
                .status,
            201);
  auto status = Send("DELETE", "/api/v1/namespaces/default/configmaps/c");
  EXPECT_EQ(status.json()["kind"], "Status");
  EXPECT_EQ(status.json()["details"]["kind"], "configmaps");
}

TEST_F(ApiServerTest, PutAndPatchUpdateObjectsAndTheStatusSubresource) {
  CreatePod("w-0");
  const std::string path = "/api/v1/namespaces/default/pods/w-0";
  auto labelled =
      Send("PATCH", path,
           R"({"metadata":{"labels":{"edl-role":"worker"}},"status":{"phase":"Running"}})",
           "application/merge-patch+json");
  ASSERT_EQ(labelled.status, 200) << labelled.body;
  EXPECT_EQ(labelled.json()["metadata"]["labels"]["edl-role"], "worker");
  EXPECT_EQ(labelled.json()["status"]["phase"], "Pending");  // the main resource keeps status
  auto status = Send("PATCH", path + "/status", R"({"status":{"phase":"Running"}})",
                     "application/strategic-merge-patch+json");
  ASSERT_EQ(status.status, 200);
  EXPECT_EQ(status.json()["status"]["phase"], "Running");
  auto json_patch =
      Send("PATCH", path, R"([{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}])",
           "application/json-patch+json");
  ASSERT_EQ(json_patch.status, 200);
  EXPECT_EQ(json_patch.json()["metadata"]["annotations"]["a"], "b");
  EXPECT_EQ(Send("PATCH", path, "{}", "application/apply-patch+yaml").status, 415);
  EXPECT_EQ(Send("PATCH", path, "not json", "application/merge-patch+json").status, 400);

  Json current = Send("GET", path).json();
  Json stale = current;
  stale["metadata"]["resourceVersion"] = "1";
  auto conflict = Send("PUT", path, stale.dump());
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.json()["message"],
            "Operation cannot be fulfilled on pods \"w-0\": the object has been modified; "
            "please apply your changes to the latest version and try again");
  current["status"]["phase"] = "Failed";
  auto put = Send("PUT", path + "/status", current.dump());
  ASSERT_EQ(put.status, 200);
  EXPECT_EQ(put.json()["status"]["phase"], "Failed");
  Json renamed = current;
  renamed["metadata"]["name"] = "other";
  renamed["metadata"].erase("resourceVersion");
  EXPECT_EQ(Send("PUT", path, renamed.dump()).status, 400);
  EXPECT_EQ(
      Send("PATCH", "/api/v1/namespaces/default/pods/nope", "{}", "application/merge-patch+json")
          .status,
      404);
}

TEST_F(ApiServerTest, ListAtAFutureResourceVersionIs504TooLarge) {
  uint64_t future = store().CurrentResourceVersion() + 1000;
  auto r = Send("GET", "/api/v1/namespaces/default/pods?resourceVersion=" + std::to_string(future));
  EXPECT_EQ(r.status, 504);
  EXPECT_EQ(r.json()["reason"], "Timeout");
  EXPECT_EQ(r.json()["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?resourceVersion=abc").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?resourceVersion=0").status, 200);
}

TEST_F(ApiServerTest, ListWithMalformedSelectorsIs400) {
  auto field = Send("GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3Dx");
  EXPECT_EQ(field.status, 400);
  EXPECT_EQ(field.json()["message"], "field label not supported: spec.foo");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?labelSelector=a%20in%20(b").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?watch=1&labelSelector=%3D").status, 400);
}

}  // namespace
}  // namespace edl::fakekube
