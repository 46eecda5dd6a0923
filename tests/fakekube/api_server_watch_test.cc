// The fake API server's watches on the wire: the synthetic ADDEDs of a
// watch without a version, replay from a version, 410 in-band for an
// expired one, selectors and named objects, timeouts and bookmarks, and
// the booleans apimachinery accepts.
#include <gtest/gtest.h>

#include <optional>

#include "tests/fakekube/api_server_fixture.h"
#include "tests/fakekube/server/api_server.h"

namespace edl::fakekube {
namespace {

using testing::ApiServerTest;
using testing::StreamReader;

// The event on one line of a watch stream; null if no line came.
Json Line(const std::optional<std::string>& line) {
  return line ? Json::parse(*line, nullptr, false) : Json();
}

TEST_F(ApiServerTest, WatchWithoutVersionStartsWithSyntheticAddedThenLiveChanges) {
  CreatePod("existing");
  StreamReader watch(client(), "/api/v1/namespaces/default/pods?watch=true");
  ASSERT_EQ(watch.status(), 200);
  EXPECT_EQ(watch.content_type(), "application/json");
  Json first = Line(watch.NextLine());
  EXPECT_EQ(first["type"], "ADDED");
  EXPECT_EQ(first["object"]["kind"], "Pod");
  EXPECT_EQ(first["object"]["metadata"]["name"], "existing");
  CreatePod("new");
  Json added = Line(watch.NextLine());
  EXPECT_EQ(added["type"], "ADDED");
  EXPECT_EQ(added["object"]["metadata"]["name"], "new");
  EXPECT_EQ(added["object"]["apiVersion"], "v1");
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/new").status, 200);
  Json deleted = Line(watch.NextLine());
  EXPECT_EQ(deleted["type"], "DELETED");
  EXPECT_EQ(deleted["object"]["metadata"]["name"], "new");
}

TEST_F(ApiServerTest, WatchFromAVersionReplaysOnlyLaterChanges) {
  CreatePod("before");
  Json list = Send("GET", "/api/v1/namespaces/default/pods").json();
  std::string rv = list["metadata"]["resourceVersion"];
  CreatePod("after");
  StreamReader watch(client(), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv);
  Json event = Line(watch.NextLine());
  EXPECT_EQ(event["type"], "ADDED");
  EXPECT_EQ(event["object"]["metadata"]["name"], "after");
  ASSERT_TRUE(
      store()
          .Update("pods", "default", "before", [](Json& p) { p["metadata"]["labels"]["x"] = "y"; })
          .ok());
  Json modified = Line(watch.NextLine());
  EXPECT_EQ(modified["type"], "MODIFIED");
  EXPECT_EQ(modified["object"]["metadata"]["name"], "before");
}

TEST_F(ApiServerTest, WatchFromAnExpiredVersionGetsOneErrorEventAndEnds) {
  Store::Options small;
  small.history_limit = 2;
  StartServer(ApiServer::Options{}, small);
  std::string old = std::to_string(store().CurrentResourceVersion());
  for (int i = 0; i < 4; ++i) CreatePod("p" + std::to_string(i));
  StreamReader watch(client(), "/api/v1/namespaces/default/pods?watch=True&resourceVersion=" + old);
  EXPECT_EQ(watch.status(), 200);
  Json error = Line(watch.NextLine());
  EXPECT_EQ(error["type"], "ERROR");
  EXPECT_EQ(error["object"]["kind"], "Status");
  EXPECT_EQ(error["object"]["code"], 410);
  EXPECT_EQ(error["object"]["reason"], "Expired");
  EXPECT_EQ(
      error["object"]["message"].get<std::string>().rfind("too old resource version: " + old, 0),
      0u);
  EXPECT_TRUE(watch.WaitForEnd());
  EXPECT_TRUE(watch.ended_cleanly());
}

TEST_F(ApiServerTest, WatchAppliesSelectorsToEveryEvent) {
  StreamReader watch(client(), "/api/v1/namespaces/default/pods?watch&labelSelector=app%3Dedl");
  ASSERT_EQ(watch.status(), 200);
  Json other = Pod("other");
  other["metadata"]["labels"]["app"] = "other";
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/pods", other.dump()).status, 201);
  CreatePod("w-0");
  Json added = Line(watch.NextLine());
  EXPECT_EQ(added["type"], "ADDED");
  EXPECT_EQ(added["object"]["metadata"]["name"], "w-0");  // "other" was never sent
  auto relabel = [&](const std::string& app) {
    ASSERT_EQ(Send("PATCH", "/api/v1/namespaces/default/pods/w-0",
                   Json{{"metadata", {{"labels", {{"app", app}}}}}}.dump(),
                   "application/merge-patch+json")
                  .status,
              200);
  };
  relabel("gone");
  Json left = Line(watch.NextLine());
  EXPECT_EQ(left["type"], "DELETED");
  EXPECT_EQ(left["object"]["metadata"]["labels"]["app"], "edl");  // the last matching state
  relabel("edl");
  EXPECT_EQ(Line(watch.NextLine())["type"], "ADDED");
}

TEST_F(ApiServerTest, WatchOnANamedObjectFollowsOnlyThatObject) {
  CreatePod("a");
  CreatePod("b");
  StreamReader watch(client(), "/api/v1/namespaces/default/pods/b?watch=1");
  Json first = Line(watch.NextLine());
  EXPECT_EQ(first["object"]["metadata"]["name"], "b");
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/a").status, 200);
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/b").status, 200);
  Json deleted = Line(watch.NextLine());
  EXPECT_EQ(deleted["type"], "DELETED");
  EXPECT_EQ(deleted["object"]["metadata"]["name"], "b");
}

TEST_F(ApiServerTest, WatchEndsAtTimeoutSecondsWithABookmarkWhenAllowed) {
  StreamReader watch(
      client(), "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&allowWatchBookmarks=1");
  ASSERT_EQ(watch.status(), 200);
  ASSERT_TRUE(watch.WaitForEnd());
  EXPECT_TRUE(watch.ended_cleanly());
  Json bookmark = Line(watch.NextLine());
  EXPECT_EQ(bookmark["type"], "BOOKMARK");
  EXPECT_EQ(bookmark["object"]["kind"], "Pod");
  EXPECT_EQ(bookmark["object"]["metadata"]["resourceVersion"],
            std::to_string(store().CurrentResourceVersion()));
}

TEST_F(ApiServerTest, WatchWithBookmarksSendsThemPeriodically) {
  StreamReader watch(client(),
                     "/api/v1/namespaces/default/configmaps?watch=true&"
                     "allowWatchBookmarks=True&timeoutSeconds=30");
  Json first = Line(watch.NextLine());
  EXPECT_EQ(first["type"], "BOOKMARK");
  EXPECT_EQ(first["object"]["kind"], "ConfigMap");
  ASSERT_TRUE(store().Create("configmaps", "default", {{"metadata", {{"name", "c"}}}}).ok());
  // Events and bookmarks interleave; the bookmark after the event carries
  // at least the event's version.
  std::optional<uint64_t> added_rv;
  for (int i = 0; i < 5; ++i) {
    Json e = Line(watch.NextLine());
    if (e["type"] == "ADDED")
      added_rv = std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>());
    if (e["type"] == "BOOKMARK" && added_rv) {
      EXPECT_GE(std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>()),
                *added_rv);
      return;
    }
  }
  FAIL() << "no bookmark after the event";
}

TEST_F(ApiServerTest, WatchParsesBooleansLikeApimachinery) {
  CreatePod("a");
  for (const char* no : {"watch=0", "watch=false", "watch=FALSE"}) {
    auto list = Send("GET", std::string("/api/v1/namespaces/default/pods?") + no);
    EXPECT_EQ(list.json()["kind"], "PodList") << no;
  }
  for (const char* yes : {"watch=1", "watch=true", "watch=True", "watch=", "watch=yes"}) {
    StreamReader watch(client(), std::string("/api/v1/namespaces/default/pods?") + yes);
    EXPECT_EQ(Line(watch.NextLine())["type"], "ADDED") << yes;
  }
}

}  // namespace
}  // namespace edl::fakekube
