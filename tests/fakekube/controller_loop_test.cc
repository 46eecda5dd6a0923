// The loop under the fake cluster's controllers: a pass at start, after an
// event on a watched resource, at every resync, and none after Stop().
#include "tests/fakekube/server/controller_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/fakekube/pod_fixtures.h"

namespace edl::fakekube {
namespace {

using testing::WaitUntil;

constexpr std::chrono::hours kNever{1};

Json ConfigMap(const std::string& name) { return {{"metadata", {{"name", name}}}}; }

TEST(ControllerLoop, RunsAPassAtStartAndAfterEachEventOnAWatchedResource) {
  Store store;
  std::atomic<int> passes{0};
  ControllerLoop loop(store, {.name = "test", .resources = {"configmaps"}, .resync = kNever},
                      [&] { ++passes; });
  loop.Start();
  ASSERT_TRUE(WaitUntil([&] { return passes == 1; }));
  ASSERT_TRUE(store.Create("configmaps", "default", ConfigMap("a")).ok());
  EXPECT_TRUE(WaitUntil([&] { return passes >= 2; }));
}

TEST(ControllerLoop, ResyncsEveryPeriodWithoutEvents) {
  Store store;
  std::atomic<int> passes{0};
  ControllerLoop loop(store,
                      {.name = "test", .resources = {}, .resync = std::chrono::milliseconds(20)},
                      [&] { ++passes; });
  loop.Start();
  EXPECT_TRUE(WaitUntil([&] { return passes >= 3; }));
}

TEST(ControllerLoop, AWakeAsksForAnotherPass) {
  Store store;
  std::atomic<int> passes{0};
  ControllerLoop loop(store, {.name = "test", .resources = {}, .resync = kNever},
                      [&] { ++passes; });
  loop.Start();
  ASSERT_TRUE(WaitUntil([&] { return passes == 1; }));
  loop.Wake();
  EXPECT_TRUE(WaitUntil([&] { return passes == 2; }));
}

TEST(ControllerLoop, StopWaitsForThePassInProgressAndIsIdempotent) {
  Store store;
  std::atomic<int> entered{0}, left{0};
  ControllerLoop loop(store, {.name = "test", .resources = {}, .resync = kNever}, [&] {
    ++entered;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ++left;
  });
  EXPECT_FALSE(loop.Stop());  // never started
  loop.Start();
  ASSERT_TRUE(WaitUntil([&] { return entered == 1; }));
  EXPECT_TRUE(loop.Stop());
  EXPECT_EQ(left.load(), entered.load());
  EXPECT_FALSE(loop.Stop());
  loop.Wake();  // harmless once stopped
}

}  // namespace
}  // namespace edl::fakekube
