// The fake API server's Store deleting objects as kube-apiserver does:
// pods at once or gracefully, preconditions, and the garbage collector's
// background, orphan and foreground propagation through ownerReferences.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "tests/fakekube/server/store.h"
#include "tests/fakekube/store_fixtures.h"

namespace edl::fakekube {
namespace {

using testing::ConfigMap;
using testing::MustCreate;
using testing::Pod;
using testing::Schedule;

Json OwnerRef(const Json& owner, bool block = false) {
  return {{"apiVersion", "v1"},
          {"kind", owner["kind"]},
          {"name", owner["metadata"]["name"]},
          {"uid", owner["metadata"]["uid"]},
          {"blockOwnerDeletion", block}};
}

// Records the types of the events a subscriber sees, by resource.
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

}  // namespace
}  // namespace edl::fakekube
