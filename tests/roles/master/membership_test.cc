#include "roles/master/membership.h"

#include <gtest/gtest.h>

namespace edl::roles::master {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(Membership, GivesEveryRegistrationANewId) {
  Membership m(2 * kSecond, 0);
  auto a = m.Register("worker-0", 10, 0);
  auto b = m.Register("worker-1", 11, 0);
  EXPECT_EQ(a.worker.id, 1);
  EXPECT_EQ(b.worker.id, 2);
  EXPECT_FALSE(a.replaced);
  EXPECT_EQ(m.StandingOf(1), Standing::kAlive);
  EXPECT_EQ(m.StandingOf(3), Standing::kUnknown);
  EXPECT_EQ(m.StandingOf(0), Standing::kUnknown);
}

TEST(Membership, ANewIncarnationReplacesTheOldOneOfTheSameName) {
  Membership m(2 * kSecond, 0);
  m.Register("worker-0", 10, 0);
  auto again = m.Register("worker-0", 12, 1);
  EXPECT_EQ(again.worker.id, 2);
  ASSERT_TRUE(again.replaced);
  EXPECT_EQ(again.replaced->id, 1);
  EXPECT_EQ(m.StandingOf(1), Standing::kGone);
  EXPECT_EQ(m.alive().size(), 1u);
  EXPECT_EQ(m.deaths(), 1);
}

TEST(Membership, DeclaresAWorkerDeadAfterTheHeartbeatTimeout) {
  Membership m(2 * kSecond, 0);
  m.Register("worker-0", 10, 0);
  m.Register("worker-1", 11, 0);
  EXPECT_EQ(m.Touch(2, kSecond + kSecond / 2), Standing::kAlive);
  EXPECT_TRUE(m.Tick(2 * kSecond).empty());
  auto dead = m.Tick(2 * kSecond + 1);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].name, "worker-0");
  EXPECT_EQ(m.StandingOf(1), Standing::kGone);
  EXPECT_EQ(m.Touch(1, 3 * kSecond), Standing::kGone);
  EXPECT_EQ(m.StandingOf(2), Standing::kAlive);
}

TEST(Membership, DeclaresAnExitedWorkerDeadAtOnce) {
  Membership m(2 * kSecond, 0);
  m.Register("worker-0", 10, 0);
  auto w = m.OnExit("worker-0");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->id, 1);
  EXPECT_FALSE(m.OnExit("worker-0"));
  EXPECT_EQ(m.StandingOf(1), Standing::kGone);
}

TEST(Membership, ScalingDownAsksTheHighestNamesToLeave) {
  Membership m(2 * kSecond, 0);
  for (const char* name : {"worker-10", "worker-2", "worker-9", "worker-1"}) {
    m.Register(name, 0, 0);
  }
  EXPECT_EQ(m.SetTarget(2), (std::vector<std::string>{"worker-9", "worker-10"}));
  EXPECT_EQ(m.StandingOf(1), Standing::kStopping);  // worker-10
  EXPECT_EQ(m.StandingOf(2), Standing::kAlive);
  EXPECT_EQ(m.active_count(), 2);
  EXPECT_TRUE(m.SetTarget(2).empty());
  EXPECT_TRUE(m.SetTarget(5).empty());
  EXPECT_EQ(m.StandingOf(1), Standing::kStopping);  // once asked, stays asked
}

TEST(Membership, AdmitsWorkersBeyondTheTargetAsStopping) {
  Membership m(2 * kSecond, 1);
  EXPECT_FALSE(m.Register("worker-0", 0, 0).worker.stopping);
  EXPECT_TRUE(m.Register("worker-1", 0, 0).worker.stopping);
}

TEST(Membership, RequestStopMarksOneWorker) {
  Membership m(2 * kSecond, 0);
  m.Register("worker-0", 0, 0);
  EXPECT_TRUE(m.RequestStop("worker-0"));
  EXPECT_FALSE(m.RequestStop("worker-7"));
  EXPECT_EQ(m.StandingOf(1), Standing::kStopping);
}

TEST(NaturalLess, OrdersNumbersByValue) {
  EXPECT_TRUE(NaturalLess("worker-9", "worker-10"));
  EXPECT_FALSE(NaturalLess("worker-10", "worker-9"));
  EXPECT_TRUE(NaturalLess("a", "b"));
  EXPECT_TRUE(NaturalLess("w", "w-1"));
  EXPECT_FALSE(NaturalLess("w-1", "w-1"));
  EXPECT_TRUE(NaturalLess("ps-3", "worker-0"));
}

}  // namespace
}  // namespace edl::roles::master
