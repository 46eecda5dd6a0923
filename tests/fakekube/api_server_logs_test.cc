// The fake API server's pods/log over HTTPS: 400 before the container
// started, text with tailLines and limitBytes, and a followed log that
// streams until the pod is terminal.
#include <gtest/gtest.h>

#include "tests/fakekube/api_server_fixture.h"
#include "tests/fakekube/server/api_server.h"

namespace edl::fakekube {
namespace {

using testing::ApiServerTest;
using testing::StreamReader;

TEST_F(ApiServerTest, LogsOfAPodThatNeverStartedAre400WaitingToStart) {
  CreatePod("w-0");
  auto r = Send("GET", "/api/v1/namespaces/default/pods/w-0/log?container=main");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["message"],
            "container \"main\" in pod \"w-0\" is waiting to start: ContainerCreating");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0/log?container=side").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/nope/log").status, 404);
}

TEST_F(ApiServerTest, LogsAreTextWithTailLines) {
  Json pod = CreatePod("w-0");
  StartContainer("w-0");
  store().AppendLog(pod["metadata"]["uid"], "one\ntwo\nthree\n");
  auto all = Send("GET", "/api/v1/namespaces/default/pods/w-0/log");
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.content_type, "text/plain");
  EXPECT_EQ(all.body, "one\ntwo\nthree\n");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0/log?tailLines=2").body,
            "two\nthree\n");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0/log?limitBytes=5").body, "one\nt");
}

TEST_F(ApiServerTest, FollowedLogsStreamUntilThePodIsTerminal) {
  Json pod = CreatePod("w-0");
  StartContainer("w-0");
  const std::string uid = pod["metadata"]["uid"];
  store().AppendLog(uid, "early\n");
  StreamReader follow(client(), "/api/v1/namespaces/default/pods/w-0/log?follow=true&tailLines=10");
  ASSERT_EQ(follow.status(), 200);
  EXPECT_EQ(follow.NextLine(), "early");
  store().AppendLog(uid, "late\n");
  EXPECT_EQ(follow.NextLine(), "late");
  EXPECT_FALSE(follow.ended());
  store().AppendLog(uid, "last\n");
  ASSERT_TRUE(
      store()
          .Update("pods", "default", "w-0", [](Json& p) { p["status"]["phase"] = "Succeeded"; })
          .ok());
  ASSERT_TRUE(follow.WaitForEnd());
  EXPECT_TRUE(follow.ended_cleanly());
  EXPECT_EQ(follow.body(), "early\nlate\nlast\n");
}

}  // namespace
}  // namespace edl::fakekube
