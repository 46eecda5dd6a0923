// The fake API server's Store: the registry rules of kube-apiserver that
// every writer shares when it creates and updates objects (defaults,
// names, conflicts, validation, admission), and pod logs. Deletion and
// garbage collection, and listing and watching, have files of their own
// (store_*_test.cc).
#include "tests/fakekube/server/store.h"

#include <gtest/gtest.h>

#include <chrono>

#include "tests/fakekube/store_fixtures.h"

namespace edl::fakekube {
namespace {

using testing::ConfigMap;
using testing::MustCreate;
using testing::Pod;

TEST(Store, CreateFillsTheServerSideFieldsAndPodDefaults) {
  Store store;
  Json pod = MustCreate(store, "pods", Pod("w-0"));
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["metadata"]["namespace"], "default");
  EXPECT_EQ(pod["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_FALSE(pod["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(pod["metadata"]["creationTimestamp"].get<std::string>().back(), 'Z');
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(pod["spec"]["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(pod["spec"]["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(pod["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(pod["spec"]["priority"], 0);
  EXPECT_EQ(pod["spec"]["containers"][0]["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  EXPECT_EQ(pod["status"]["qosClass"], "BestEffort");
}

TEST(Store, ResourceVersionsStartFromTheWallClockAndGrowWithEveryWrite) {
  const uint64_t before = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  Store store;
  uint64_t first = store.CurrentResourceVersion();
  EXPECT_GE(first, before);
  Json pod = MustCreate(store, "pods", Pod("a"));
  EXPECT_EQ(pod["metadata"]["resourceVersion"], std::to_string(first + 1));
  EXPECT_EQ(store.CurrentResourceVersion(), first + 1);
}

TEST(Store, GenerateNameAppendsFiveRandomCharacters) {
  Store store;
  Json pod = Pod("");
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "job1-worker-";
  Json created = MustCreate(store, "pods", pod);
  std::string name = created["metadata"]["name"];
  ASSERT_EQ(name.size(), std::string("job1-worker-").size() + 5);
  EXPECT_EQ(name.rfind("job1-worker-", 0), 0u);
  Json second = MustCreate(store, "pods", pod);
  EXPECT_NE(second["metadata"]["name"], name);
}

TEST(Store, CreatingAnExistingNameIs409AlreadyExists) {
  Store store;
  MustCreate(store, "pods", Pod("ps-0"));
  auto again = store.Create("pods", "default", Pod("ps-0"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error.code, 409);
  EXPECT_EQ(again.error.reason, "AlreadyExists");
  EXPECT_EQ(again.error.message, "pods \"ps-0\" already exists");
  EXPECT_EQ(again.error.details["kind"], "pods");
}

TEST(Store, APodWithoutContainersIs422Invalid) {
  Store store;
  auto created = store.Create("pods", "default", {{"metadata", {{"name", "w-0"}}}});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error.code, 422);
  EXPECT_EQ(created.error.reason, "Invalid");
  EXPECT_EQ(created.error.message, "Pod \"w-0\" is invalid: spec.containers: Required value");
  EXPECT_EQ(created.error.details["kind"], "Pod");
  EXPECT_EQ(created.error.details["causes"][0]["reason"], "FieldValueRequired");
  EXPECT_EQ(created.error.details["causes"][0]["field"], "spec.containers");
}

TEST(Store, AContainerWithoutImageAndANamelessObjectAre422) {
  Store store;
  Json pod = Pod("w-1");
  pod["spec"]["containers"][0].erase("image");
  auto created = store.Create("pods", "default", pod);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error.message,
            "Pod \"w-1\" is invalid: spec.containers[0].image: Required value");
  auto nameless = store.Create("configmaps", "default", {{"data", Json::object()}});
  ASSERT_FALSE(nameless.ok());
  EXPECT_EQ(nameless.error.code, 422);
  EXPECT_EQ(nameless.error.message,
            "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName "
            "is required");
  auto bad_name = store.Create("configmaps", "default", ConfigMap("Not_Valid"));
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error.code, 422);
}

TEST(Store, ANamespaceThatDiffersFromTheRequestIs400) {
  Store store;
  Json pod = Pod("w-0");
  pod["metadata"]["namespace"] = "other";
  auto created = store.Create("pods", "default", pod);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error.code, 400);
  EXPECT_EQ(created.error.reason, "BadRequest");
  EXPECT_EQ(created.error.message,
            "the namespace of the provided object does not match the namespace sent on the "
            "request");
}

TEST(Store, PriorityAdmissionFillsPriorityAndRefusesUnknownClasses) {
  Store store;
  Json pod = Pod("w-0");
  pod["spec"]["priorityClassName"] = "edl-low";
  auto refused = store.Create("pods", "default", pod);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error.code, 403);
  EXPECT_EQ(refused.error.reason, "Forbidden");
  EXPECT_EQ(refused.error.message,
            "pods \"w-0\" is forbidden: no PriorityClass with name edl-low was found");

  MustCreate(store, "priorityclasses", {{"metadata", {{"name", "edl-low"}}}, {"value", 1000}}, "");
  Json admitted = MustCreate(store, "pods", pod);
  EXPECT_EQ(admitted["spec"]["priority"], 1000);
  EXPECT_EQ(admitted["spec"]["preemptionPolicy"], "PreemptLowerPriority");

  Json forged = Pod("w-1");
  forged["spec"]["priorityClassName"] = "edl-low";
  forged["spec"]["priority"] = 5;
  auto contradicted = store.Create("pods", "default", forged);
  ASSERT_FALSE(contradicted.ok());
  EXPECT_EQ(contradicted.error.code, 403);
}

TEST(Store, BuiltInPriorityClassesAndNamespacesExist) {
  Store store;
  EXPECT_TRUE(store.Get("priorityclasses", "", "system-cluster-critical").ok());
  EXPECT_TRUE(store.Get("namespaces", "", "default").ok());
  Json pod = Pod("critical");
  pod["spec"]["priorityClassName"] = "system-node-critical";
  EXPECT_EQ(MustCreate(store, "pods", pod)["spec"]["priority"], 2000001000);
}

TEST(Store, ServicesGetAClusterIpAndTargetPortDefaults) {
  Store store;
  Json svc = MustCreate(store, "services",
                        {{"metadata", {{"name", "job1-master"}}},
                         {"spec", {{"ports", {{{"name", "grpc"}, {"port", 50001}}}}}}});
  EXPECT_EQ(svc["spec"]["type"], "ClusterIP");
  const std::string ip = svc["spec"]["clusterIP"].get<std::string>();
  ASSERT_EQ(ip.rfind("127.", 0), 0u) << ip;  // loopback, so the fake's kube-proxy can listen on it
  const int block = std::stoi(ip.substr(4));
  EXPECT_TRUE(block >= 12 && block <= 250) << ip;
  EXPECT_EQ(svc["spec"]["ports"][0]["targetPort"], 50001);
  EXPECT_EQ(svc["spec"]["ports"][0]["protocol"], "TCP");
  Json headless = MustCreate(
      store, "services", {{"metadata", {{"name", "headless"}}}, {"spec", {{"clusterIP", "None"}}}});
  EXPECT_EQ(headless["spec"]["clusterIP"], "None");
}

TEST(Store, UpdateKeepsIdentityAndSkipsNoOpWrites) {
  Store store;
  Json pod = MustCreate(store, "pods", Pod("w-0"));
  uint64_t rv = store.CurrentResourceVersion();
  auto same = store.Update("pods", "default", "w-0", [](Json&) {});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(store.CurrentResourceVersion(), rv);
  auto changed = store.Update("pods", "default", "w-0", [](Json& p) {
    p["metadata"]["uid"] = "forged";
    p["metadata"]["name"] = "renamed";
    p["status"]["phase"] = "Running";
  });
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ((*changed.value)["metadata"]["uid"], pod["metadata"]["uid"]);
  EXPECT_EQ((*changed.value)["metadata"]["name"], "w-0");
  EXPECT_EQ((*changed.value)["status"]["phase"], "Running");
  EXPECT_EQ((*changed.value)["metadata"]["resourceVersion"], std::to_string(rv + 1));
  EXPECT_EQ(store.Update("pods", "default", "nope", [](Json&) {}).error.code, 404);
}

TEST(Store, LogsAreKeptPerPodUid) {
  Store store;
  store.AppendLog("uid-1", "hello\n");
  store.AppendLog("uid-1", "world\n");
  EXPECT_EQ(store.Log("uid-1"), "hello\nworld\n");
  EXPECT_EQ(store.Log("uid-2"), "");
}

}  // namespace
}  // namespace edl::fakekube
