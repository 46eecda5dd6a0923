// The fake API server's Store as its readers see it: lists filtered by
// label and field selectors, the event history watches replay from (410
// once it no longer reaches back), and subscribers that see every event in
// resourceVersion order, writing to the store from a callback included.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "tests/fakekube/server/store.h"
#include "tests/fakekube/store_fixtures.h"

namespace edl::fakekube {
namespace {

using testing::ConfigMap;
using testing::MustCreate;
using testing::Pod;
using testing::Schedule;

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

}  // namespace
}  // namespace edl::fakekube
