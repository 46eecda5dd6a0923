// The fake API server's Store: the registry rules of kube-apiserver that
// every writer shares (defaults, names, conflicts, validation, admission,
// deletion, garbage collection, history).
#include "tests/fakekube/server/store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace edl::fakekube {
namespace {

Json Pod(const std::string& name) {
  return {{"metadata", {{"name", name}, {"labels", {{"app", "edl"}}}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}};
}

Json ConfigMap(const std::string& name) {
  return {{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
}

Json OwnerRef(const Json& owner, bool block = false) {
  return {{"apiVersion", "v1"},
          {"kind", owner["kind"]},
          {"name", owner["metadata"]["name"]},
          {"uid", owner["metadata"]["uid"]},
          {"blockOwnerDeletion", block}};
}

Json MustCreate(Store& store, const std::string& resource, Json object,
                const std::string& ns = "default") {
  auto created = store.Create(resource, ns, std::move(object));
  EXPECT_TRUE(created.ok()) << created.error.message;
  return created.ok() ? *created.value : Json();
}

// Puts a pod on a node, as the scheduler's binding does.
void Schedule(Store& store, const std::string& name) {
  auto bound =
      store.Update("pods", "default", name, [](Json& pod) { pod["spec"]["nodeName"] = "node-1"; });
  ASSERT_TRUE(bound.ok());
}

struct Recorder {
  explicit Recorder(Store& s) : store(s) {
    id = store.Subscribe([this](const WatchEvent& e) {
      std::lock_guard<std::mutex> lock(mu);
      events.push_back(e);
    });
  }
  ~Recorder() { store.Unsubscribe(id); }
  std::vector<std::string> Types(const std::string& resource) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> types;
    for (const auto& e : events) {
      if (e.resource == resource) types.push_back(e.type);
    }
    return types;
  }
  Store& store;
  uint64_t id;
  std::mutex mu;
  std::vector<WatchEvent> events;
};

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

TEST(Store, AnUnscheduledPodIsDeletedAtOnceAndReturned) {
  Store store;
  Recorder recorder(store);
  MustCreate(store, "pods", Pod("w-0"));
  auto deleted = store.Delete("pods", "default", "w-0", DeleteRequest{});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted.value)["kind"], "Pod");
  EXPECT_EQ((*deleted.value)["metadata"]["name"], "w-0");
  EXPECT_FALSE(store.Get("pods", "default", "w-0").ok());
  EXPECT_EQ(recorder.Types("pods"), (std::vector<std::string>{"ADDED", "DELETED"}));
}

TEST(Store, AScheduledPodIsDeletedGracefullyUntilRemoved) {
  Store store;
  Recorder recorder(store);
  MustCreate(store, "pods", Pod("w-0"));
  Schedule(store, "w-0");
  auto deleted = store.Delete("pods", "default", "w-0", DeleteRequest{});
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE((*deleted.value)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*deleted.value)["metadata"]["deletionGracePeriodSeconds"], 30);
  ASSERT_TRUE(store.Get("pods", "default", "w-0").ok());
  DeleteRequest shorter;
  shorter.grace_period_seconds = 5;
  auto shortened = store.Delete("pods", "default", "w-0", shorter);
  EXPECT_EQ((*shortened.value)["metadata"]["deletionGracePeriodSeconds"], 5);
  ASSERT_TRUE(store.Remove("pods", "default", "w-0").ok());
  EXPECT_FALSE(store.Get("pods", "default", "w-0").ok());
  EXPECT_EQ(recorder.Types("pods"),
            (std::vector<std::string>{"ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"}));
}

TEST(Store, GracePeriodZeroDeletesAScheduledPodAtOnce) {
  Store store;
  MustCreate(store, "pods", Pod("w-0"));
  Schedule(store, "w-0");
  DeleteRequest now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(store.Delete("pods", "default", "w-0", now).ok());
  EXPECT_FALSE(store.Get("pods", "default", "w-0").ok());
}

TEST(Store, DeletingAConfigMapReturnsTheSuccessStatus) {
  Store store;
  Json cm = MustCreate(store, "configmaps", ConfigMap("job1-config"));
  auto deleted = store.Delete("configmaps", "default", "job1-config", DeleteRequest{});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted.value)["kind"], "Status");
  EXPECT_EQ((*deleted.value)["status"], "Success");
  EXPECT_EQ((*deleted.value)["details"]["kind"], "configmaps");
  EXPECT_EQ((*deleted.value)["details"]["uid"], cm["metadata"]["uid"]);
  auto missing = store.Delete("configmaps", "default", "job1-config", DeleteRequest{});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error.code, 404);
  EXPECT_EQ(missing.error.message, "configmaps \"job1-config\" not found");
}

TEST(Store, DeletePreconditionsThatDoNotMatchAre409) {
  Store store;
  Json pod = MustCreate(store, "pods", Pod("w-0"));
  DeleteRequest wrong_uid;
  wrong_uid.precondition_uid = "not-the-uid";
  auto refused = store.Delete("pods", "default", "w-0", wrong_uid);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error.code, 409);
  EXPECT_EQ(refused.error.reason, "Conflict");
  EXPECT_EQ(refused.error.message,
            "Operation cannot be fulfilled on pods \"w-0\": Precondition failed: UID in "
            "precondition: not-the-uid, UID in object meta: " +
                pod["metadata"]["uid"].get<std::string>());
  DeleteRequest wrong_rv;
  wrong_rv.precondition_resource_version = "1";
  EXPECT_EQ(store.Delete("pods", "default", "w-0", wrong_rv).error.code, 409);
  DeleteRequest right;
  right.precondition_uid = pod["metadata"]["uid"];
  EXPECT_TRUE(store.Delete("pods", "default", "w-0", right).ok());
}

TEST(Store, DeletingAnOwnerGarbageCollectsItsDependents) {
  Store store;
  Json master = MustCreate(store, "pods", Pod("job1-master"));
  Json cm = ConfigMap("job1-config");
  cm["metadata"]["ownerReferences"] = {OwnerRef(master)};
  MustCreate(store, "configmaps", cm);
  Json idle = Pod("job1-worker-0");  // unscheduled: goes at once
  idle["metadata"]["ownerReferences"] = {OwnerRef(master)};
  MustCreate(store, "pods", idle);
  Json running = Pod("job1-worker-1");  // scheduled: deleted gracefully
  running["metadata"]["ownerReferences"] = {OwnerRef(master)};
  MustCreate(store, "pods", running);
  Schedule(store, "job1-worker-1");
  Json unrelated = MustCreate(store, "configmaps", ConfigMap("unrelated"));

  ASSERT_TRUE(store.Delete("pods", "default", "job1-master", DeleteRequest{}).ok());
  EXPECT_FALSE(store.Get("configmaps", "default", "job1-config").ok());
  EXPECT_FALSE(store.Get("pods", "default", "job1-worker-0").ok());
  auto terminating = store.Get("pods", "default", "job1-worker-1");
  ASSERT_TRUE(terminating.ok());
  EXPECT_TRUE((*terminating.value)["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(store.Get("configmaps", "default", "unrelated").ok());
}

TEST(Store, ADependentKeepsLivingWhileOneOwnerRemains) {
  Store store;
  Json a = MustCreate(store, "configmaps", ConfigMap("owner-a"));
  Json b = MustCreate(store, "configmaps", ConfigMap("owner-b"));
  Json dependent = ConfigMap("dependent");
  dependent["metadata"]["ownerReferences"] = {OwnerRef(a), OwnerRef(b)};
  MustCreate(store, "configmaps", dependent);
  ASSERT_TRUE(store.Delete("configmaps", "default", "owner-a", DeleteRequest{}).ok());
  EXPECT_TRUE(store.Get("configmaps", "default", "dependent").ok());
  ASSERT_TRUE(store.Delete("configmaps", "default", "owner-b", DeleteRequest{}).ok());
  EXPECT_FALSE(store.Get("configmaps", "default", "dependent").ok());
}

TEST(Store, ADependentWhoseOwnerUidIsWrongIsCollected) {
  Store store;
  MustCreate(store, "pods", Pod("job1-master"));
  Json cm = ConfigMap("orphan");
  cm["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                        {"kind", "Pod"},
                                        {"name", "job1-master"},
                                        {"uid", "00000000-0000-4000-8000-000000000000"}}};
  ASSERT_TRUE(store.Create("configmaps", "default", cm).ok());
  EXPECT_FALSE(store.Get("configmaps", "default", "orphan").ok());
}

TEST(Store, OrphanPropagationStripsTheOwnerReferences) {
  Store store;
  Json owner = MustCreate(store, "configmaps", ConfigMap("owner"));
  Json dependent = ConfigMap("dependent");
  dependent["metadata"]["ownerReferences"] = {OwnerRef(owner)};
  MustCreate(store, "configmaps", dependent);
  DeleteRequest orphan;
  orphan.propagation_policy = "Orphan";
  ASSERT_TRUE(store.Delete("configmaps", "default", "owner", orphan).ok());
  auto kept = store.Get("configmaps", "default", "dependent");
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE((*kept.value)["metadata"].contains("ownerReferences"));
}

TEST(Store, ForegroundDeletionKeepsTheOwnerUntilBlockingDependentsAreGone) {
  Store store;
  Json owner = MustCreate(store, "configmaps", ConfigMap("owner"));
  Json worker = Pod("worker");
  worker["metadata"]["ownerReferences"] = {OwnerRef(owner, /*block=*/true)};
  MustCreate(store, "pods", worker);
  Schedule(store, "worker");
  DeleteRequest foreground;
  foreground.propagation_policy = "Foreground";
  auto deleted = store.Delete("configmaps", "default", "owner", foreground);
  ASSERT_TRUE(deleted.ok());
  auto waiting = store.Get("configmaps", "default", "owner");
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ((*waiting.value)["metadata"]["finalizers"][0], "foregroundDeletion");
  EXPECT_TRUE((*waiting.value)["metadata"].contains("deletionTimestamp"));
  auto worker_now = store.Get("pods", "default", "worker");
  ASSERT_TRUE(worker_now.ok());
  EXPECT_TRUE((*worker_now.value)["metadata"].contains("deletionTimestamp"));
  ASSERT_TRUE(store.Remove("pods", "default", "worker").ok());  // the kubelet is done
  EXPECT_FALSE(store.Get("configmaps", "default", "owner").ok());
}

TEST(Store, ListFiltersByLabelAndFieldSelectorsAndStripsKinds) {
  Store store;
  MustCreate(store, "pods", Pod("a"));
  Json other = Pod("b");
  other["metadata"]["labels"] = {{"app", "other"}};
  MustCreate(store, "pods", other);
  Schedule(store, "b");
  auto by_label = store.List("pods", "default", "app=edl", "");
  ASSERT_TRUE(by_label.ok());
  ASSERT_EQ(by_label.value->items.size(), 1u);
  EXPECT_EQ(by_label.value->items[0]["metadata"]["name"], "a");
  EXPECT_FALSE(by_label.value->items[0].contains("kind"));
  EXPECT_EQ(by_label.value->resource_version, store.CurrentResourceVersion());
  auto by_field = store.List("pods", "", "", "spec.nodeName=node-1");
  ASSERT_TRUE(by_field.ok());
  ASSERT_EQ(by_field.value->items.size(), 1u);
  EXPECT_EQ(by_field.value->items[0]["metadata"]["name"], "b");
  auto by_name = store.List("pods", "default", "", "metadata.name!=a,status.phase=Pending");
  ASSERT_EQ(by_name.value->items.size(), 1u);
  EXPECT_EQ(store.List("pods", "other-ns", "", "").value->items.size(), 0u);
}

TEST(Store, ListRefusesUnsupportedFieldLabelsAndMalformedSelectors) {
  Store store;
  auto field = store.List("pods", "default", "", "spec.foo=x");
  ASSERT_FALSE(field.ok());
  EXPECT_EQ(field.error.code, 400);
  EXPECT_EQ(field.error.message, "field label not supported: spec.foo");
  auto no_operator = store.List("pods", "default", "", "metadata.name");
  ASSERT_FALSE(no_operator.ok());
  EXPECT_EQ(no_operator.error.code, 400);
  auto label = store.List("pods", "default", "app in (a,b", "");
  ASSERT_FALSE(label.ok());
  EXPECT_EQ(label.error.code, 400);
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

TEST(Store, EventsSinceReplaysTheChangesAfterAVersion) {
  Store store;
  uint64_t start = store.CurrentResourceVersion();
  MustCreate(store, "pods", Pod("a"));
  MustCreate(store, "configmaps", ConfigMap("c"));
  ASSERT_TRUE(store.Delete("pods", "default", "a", DeleteRequest{}).ok());
  auto events = store.EventsSince("pods", start);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events.value->size(), 2u);
  EXPECT_EQ((*events.value)[0].type, "ADDED");
  EXPECT_EQ((*events.value)[1].type, "DELETED");
  EXPECT_GT((*events.value)[1].resource_version, (*events.value)[0].resource_version);
  EXPECT_TRUE(store.EventsSince("pods", store.CurrentResourceVersion()).value->empty());
}

TEST(Store, EventsSinceAVersionOlderThanTheHistoryIs410Expired) {
  Store::Options options;
  options.history_limit = 3;
  Store store(options);
  uint64_t start = store.CurrentResourceVersion();
  for (int i = 0; i < 5; ++i) MustCreate(store, "configmaps", ConfigMap("c" + std::to_string(i)));
  auto events = store.EventsSince("configmaps", start);
  ASSERT_FALSE(events.ok());
  EXPECT_EQ(events.error.code, 410);
  EXPECT_EQ(events.error.reason, "Expired");
  EXPECT_EQ(
      events.error.message.rfind("too old resource version: " + std::to_string(start) + " (", 0),
      0u);
  EXPECT_TRUE(store.EventsSince("configmaps", store.CurrentResourceVersion() - 2).ok());
}

TEST(Store, SubscribersSeeEventsInResourceVersionOrderAcrossWriters) {
  Store store;
  std::mutex mu;
  std::vector<uint64_t> seen;
  uint64_t id = store.Subscribe([&](const WatchEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(e.resource_version);
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&store, t] {
      for (int i = 0; i < 50; ++i) {
        (void)store.Create("configmaps", "default",
                           ConfigMap("c-" + std::to_string(t) + "-" + std::to_string(i)));
      }
    });
  }
  for (auto& w : writers) w.join();
  store.Unsubscribe(id);
  ASSERT_EQ(seen.size(), 200u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i], seen[i - 1] + 1);
}

TEST(Store, ACallbackMayWriteToTheStore) {
  Store store;
  uint64_t id = store.Subscribe([&store](const WatchEvent& e) {
    if (e.type == "ADDED" && e.resource == "pods") {
      (void)store.Create("configmaps", "default",
                         ConfigMap(e.object["metadata"]["name"].get<std::string>() + "-seen"));
    }
  });
  MustCreate(store, "pods", Pod("a"));
  store.Unsubscribe(id);
  EXPECT_TRUE(store.Get("configmaps", "default", "a-seen").ok());
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
