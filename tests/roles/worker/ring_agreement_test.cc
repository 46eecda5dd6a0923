// The agreement of a new allreduce ring on where training continues.
#include "roles/worker/ring_agreement.h"

#include <gtest/gtest.h>

namespace edl::roles::worker {
namespace {

// What the ring's sum of every member's table gives.
std::vector<float> Summed(const std::vector<MemberPosition>& members) {
  const int world = static_cast<int>(members.size());
  std::vector<float> sum(3 * members.size(), 0.f);
  for (int r = 0; r < world; ++r) {
    std::vector<float> t = EncodePosition(world, r, members[r]);
    for (size_t i = 0; i < t.size(); ++i) sum[i] += t[i];
  }
  return sum;
}

TEST(RingAgreement, ContinuesFromTheSmallestCountAmongOldMembers) {
  // Rank 1 finished step 7 where the others' collective failed.
  RingAgreement a = Agree(Summed({{false, 6}, {false, 7}, {false, 6}}));
  EXPECT_EQ(a.steps, 6);
  EXPECT_EQ(a.source, 0);
  EXPECT_FALSE(a.everyone_new);
}

TEST(RingAgreement, TakesTheStateOfAnOldMemberNotOfANewOne) {
  // A new member (its own count is whatever its process started with) at
  // rank 0; the old members are at step 1500.
  RingAgreement a = Agree(Summed({{true, 0}, {false, 1500}, {false, 1500}}));
  EXPECT_EQ(a.steps, 1500);
  EXPECT_EQ(a.source, 1);
}

TEST(RingAgreement, TheFirstRingOfAJobTakesRankZeros) {
  RingAgreement a = Agree(Summed({{true, 0}, {true, 0}}));
  EXPECT_TRUE(a.everyone_new);
  EXPECT_EQ(a.source, 0);
  EXPECT_EQ(a.steps, 0);
}

TEST(RingAgreement, StepCountsBeyondFloatPrecisionSurviveTheSum) {
  const int64_t big = (int64_t{1} << 40) + 12345;
  RingAgreement a = Agree(Summed({{false, big + 1}, {false, big}}));
  EXPECT_EQ(a.steps, big);
  EXPECT_EQ(a.source, 1);
}

TEST(RingAgreement, AOneMemberRingAgreesWithItself) {
  RingAgreement a = Agree(Summed({{false, 42}}));
  EXPECT_EQ(a.steps, 42);
  EXPECT_EQ(a.source, 0);
}

}  // namespace
}  // namespace edl::roles::worker
