#include "roles/master/rendezvous.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace edl::roles::master {
namespace {

TEST(Rendezvous, RanksFollowJoinOrderAndEveryChangeBumpsTheVersion) {
  Rendezvous r;
  EXPECT_EQ(r.View().version, 0u);
  EXPECT_EQ(r.Join("worker-0", "a:1"), 1u);
  EXPECT_EQ(r.Join("worker-1", "b:1"), 2u);
  EXPECT_EQ(r.Join("worker-2", "c:1"), 3u);
  RingView v = r.View();
  EXPECT_EQ(v.version, 3u);
  EXPECT_EQ(v.size(), 3);
  EXPECT_EQ(v.RankOf("worker-2"), 2);
  EXPECT_EQ(v.Addresses(), (std::vector<std::string>{"a:1", "b:1", "c:1"}));
}

TEST(Rendezvous, SurvivorsKeepTheirOrderWhenAMemberLeaves) {
  Rendezvous r;
  r.Join("worker-0", "a:1");
  r.Join("worker-1", "b:1");
  r.Join("worker-2", "c:1");
  EXPECT_EQ(r.Leave("worker-1"), 4u);
  RingView v = r.View();
  EXPECT_EQ(v.Addresses(), (std::vector<std::string>{"a:1", "c:1"}));
  EXPECT_EQ(v.RankOf("worker-1"), -1);
  EXPECT_EQ(v.RankOf("worker-2"), 1);
  // Leaving twice (the heartbeat and the process exit both report it)
  // changes nothing.
  EXPECT_EQ(r.Leave("worker-1"), 4u);
  EXPECT_EQ(r.View().version, 4u);
}

TEST(Rendezvous, ARelaunchedWorkerRejoinsAtTheEndWithItsNewAddress) {
  Rendezvous r;
  r.Join("worker-0", "a:1");
  r.Join("worker-1", "b:1");
  r.Join("worker-0", "a:2");
  RingView v = r.View();
  EXPECT_EQ(v.Addresses(), (std::vector<std::string>{"b:1", "a:2"}));
  EXPECT_EQ(v.version, 3u);
}

TEST(Rendezvous, NewMembersTakeTheStateOfTheLongestStandingMember) {
  Rendezvous r;
  r.Join("worker-0", "a:1");
  r.Join("worker-1", "b:1");
  // The first ring: everyone is new; the first member's initialization wins.
  EXPECT_EQ(r.View().source_rank, 0);
  r.MarkSynced(2);
  EXPECT_EQ(r.View().source_rank, -1);
  r.Leave("worker-0");
  EXPECT_EQ(r.View().source_rank, -1) << "a leave needs no broadcast";
  r.Join("worker-2", "c:1");
  RingView v = r.View();
  EXPECT_EQ(v.source_rank, v.RankOf("worker-1"));
  // A sync of an older version does not cover the newer member.
  r.MarkSynced(3);
  EXPECT_EQ(r.View().source_rank, v.RankOf("worker-1"));
  r.MarkSynced(v.version);
  EXPECT_EQ(r.View().source_rank, -1);
}

TEST(Rendezvous, ConcurrentChangesGetDistinctIncreasingVersions) {
  Rendezvous r;
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> seen(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        const std::string name = "worker-" + std::to_string(t);
        seen[t].push_back(i % 2 == 0 ? r.Join(name, "h:" + std::to_string(i)) : r.Leave(name));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (const auto& s : seen) {
    for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i - 1], s[i]);
    all.insert(s.begin(), s.end());
  }
  EXPECT_EQ(all.size(), 400u);
  EXPECT_EQ(r.version(), 400u);
  EXPECT_EQ(r.View().size(), 0);
}

}  // namespace
}  // namespace edl::roles::master
