#include "roles/ps/applied_pushes.h"

#include <gtest/gtest.h>

namespace edl::roles::ps {
namespace {

TEST(AppliedPushes, TakesEachMinibatchOfATaskOnce) {
  AppliedPushes applied;
  EXPECT_EQ(applied.Take(7, 0).apply, true);
  EXPECT_EQ(applied.Take(7, 1).taken, 2);
  const AppliedPushes::Claim again = applied.Take(7, 0);
  EXPECT_FALSE(again.apply);
  EXPECT_EQ(again.taken, 2);
  EXPECT_FALSE(applied.Take(7, 1).apply);
  EXPECT_TRUE(applied.Take(7, 2).apply);
  EXPECT_EQ(applied.Taken(7), 3);
  EXPECT_EQ(applied.Taken(8), 0);  // never pushed
}

TEST(AppliedPushes, KeepsTasksApartAndAppliesUnnamedPushesAlways) {
  AppliedPushes applied;
  EXPECT_TRUE(applied.Take(1, 0).apply);
  EXPECT_TRUE(applied.Take(2, 0).apply);
  EXPECT_TRUE(applied.Take(0, 0).apply);
  EXPECT_TRUE(applied.Take(0, 0).apply);
  EXPECT_EQ(applied.tasks_in_flight(), 2u);  // unnamed pushes are not counted
}

TEST(AppliedPushes, RefusesAMinibatchBeyondTheCountAsBehind) {
  AppliedPushes applied;
  applied.Take(3, 0);
  const AppliedPushes::Claim beyond = applied.Take(3, 4);  // 1..3 are missing here
  EXPECT_FALSE(beyond.apply);
  EXPECT_TRUE(beyond.behind);
  EXPECT_EQ(beyond.taken, 1);
  EXPECT_EQ(applied.Taken(3), 1);
  EXPECT_TRUE(applied.Take(3, 1).apply);
  EXPECT_FALSE(applied.Take(3, 0).behind);  // a repeat is not behind
}

// A PS restored from a checkpoint may lack some or all of a task's
// minibatches when the settling push comes: it keeps what it has, for the
// master to redo the task, instead of settling what it never applied.
TEST(AppliedPushes, SettlesOnlyATaskItTookEveryMinibatchOf) {
  AppliedPushes applied;
  for (int64_t i = 0; i < 3; ++i) applied.Take(7, i);
  EXPECT_FALSE(applied.Settle(7, 4));  // one missing
  EXPECT_EQ(applied.Taken(7), 3);
  EXPECT_FALSE(applied.Settle(8, 4));  // none taken here
  EXPECT_EQ(applied.Taken(8), 0);
  EXPECT_EQ(applied.settled_ranges(), 0u);
  applied.Take(7, 3);
  EXPECT_TRUE(applied.Settle(7, 4));
  EXPECT_EQ(applied.Taken(7), AppliedPushes::kSettled);
  EXPECT_TRUE(applied.Settle(7, 4));  // again: still settled
  EXPECT_EQ(applied.tasks_in_flight(), 0u);
}

TEST(AppliedPushes, ExportsAndImportsItsState) {
  AppliedPushes applied;
  applied.Take(40, 0);
  applied.Take(40, 1);
  for (int64_t id : {10, 11, 12, 20}) applied.Settle(id);
  const AppliedPushes::State state = applied.Export();
  EXPECT_EQ(state.taken, (std::vector<std::pair<int64_t, int64_t>>{{40, 2}}));
  EXPECT_EQ(state.settled, (std::vector<std::pair<int64_t, int64_t>>{{10, 12}, {20, 20}}));
  AppliedPushes restored;
  ASSERT_TRUE(restored.Import(state).ok());
  EXPECT_EQ(restored.Taken(40), 2);
  EXPECT_EQ(restored.Taken(11), AppliedPushes::kSettled);
  EXPECT_EQ(restored.Taken(13), 0);
}

TEST(AppliedPushes, RefusesAMalformedStateNamingTheEntry) {
  AppliedPushes applied;
  Status s = applied.Import({{{0, 3}}, {}});
  EXPECT_NE(s.message().find("task 0"), std::string::npos) << s.message();
  s = applied.Import({{{5, -1}}, {}});
  EXPECT_NE(s.message().find("count -1"), std::string::npos) << s.message();
  s = applied.Import({{}, {{10, 12}, {12, 14}}});  // overlapping
  EXPECT_NE(s.message().find("[12, 14]"), std::string::npos) << s.message();
  s = applied.Import({{}, {{10, 9}}});  // backwards
  EXPECT_FALSE(s.ok());
}

TEST(AppliedPushes, LeavesOutTheClaimsOfARoundNotAppliedYet) {
  AppliedPushes applied;
  applied.Take(7, 0);
  applied.Take(7, 1);
  applied.Take(8, 0);
  applied.Settle(8);  // its last minibatch still waits in the round
  applied.Settle(9);
  const AppliedPushes::State before =
      AppliedPushes::WithoutClaims(applied.Export(), {{7, 1}, {8, 0}});
  EXPECT_EQ(before.taken, (std::vector<std::pair<int64_t, int64_t>>{{7, 1}, {8, 0}}));
  EXPECT_EQ(before.settled, (std::vector<std::pair<int64_t, int64_t>>{{9, 9}}));
}

TEST(AppliedPushes, ASettledTaskRefusesEveryLaterPushAndDropsItsCount) {
  AppliedPushes applied;
  applied.Take(5, 0);
  applied.Take(6, 0);
  applied.Settle(5);
  EXPECT_EQ(applied.tasks_in_flight(), 1u);
  EXPECT_EQ(applied.Taken(5), AppliedPushes::kSettled);
  const AppliedPushes::Claim late = applied.Take(5, 1);  // never taken, but settled
  EXPECT_FALSE(late.apply);
  EXPECT_EQ(late.taken, AppliedPushes::kSettled);
  EXPECT_EQ(applied.Taken(6), 1);
  applied.Settle(5);  // again: nothing changes
  EXPECT_EQ(applied.settled_ranges(), 1u);
}

TEST(AppliedPushes, KeepsSettledTasksAsRangesOfIds) {
  AppliedPushes applied;
  // Out of order, as tasks of an epoch end: 10..19 and 30..31.
  for (int64_t id : {12, 10, 11, 30, 14, 13, 19, 31, 15, 17, 16, 18}) applied.Settle(id);
  EXPECT_EQ(applied.settled_ranges(), 2u);
  for (int64_t id = 9; id <= 32; ++id) {
    const bool settled = (id >= 10 && id <= 19) || id == 30 || id == 31;
    EXPECT_EQ(applied.Taken(id) == AppliedPushes::kSettled, settled) << id;
  }
  applied.Settle(25);  // a gap on both sides: a range of its own
  EXPECT_EQ(applied.settled_ranges(), 3u);
  for (int64_t id = 20; id <= 29; ++id) applied.Settle(id);
  EXPECT_EQ(applied.settled_ranges(), 1u);  // 10..31 in one
  EXPECT_TRUE(applied.Take(32, 0).apply);
}

}  // namespace
}  // namespace edl::roles::ps
