#include "roles/ps/id_row_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace edl::roles::ps {
namespace {

TEST(IdRowMap, FindsEveryInsertedIdAcrossGrowthAndNothingElse) {
  IdRowMap map;
  std::unordered_map<int64_t, int64_t> truth;
  std::mt19937_64 rng(3);
  // Ids that collide in the low bits, dense ids and random large ones.
  for (int64_t i = 0; i < 20000; ++i) {
    const int64_t id = i % 3 == 0 ? i * 1024 : i % 3 == 1 ? i : static_cast<int64_t>(rng() >> 2);
    if (truth.count(id)) continue;
    EXPECT_EQ(map.Find(id), -1) << id;
    map.Insert(id, static_cast<int64_t>(truth.size()));
    truth[id] = static_cast<int64_t>(truth.size());
  }
  EXPECT_EQ(map.size(), truth.size());
  for (const auto& [id, row] : truth) ASSERT_EQ(map.Find(id), row) << id;
  for (int64_t id : {int64_t{1} << 61, int64_t{7} * 1024 + 1}) {
    if (!truth.count(id)) {
      EXPECT_EQ(map.Find(id), -1) << id;
    }
  }
  EXPECT_EQ(IdRowMap().Find(0), -1);
}

}  // namespace
}  // namespace edl::roles::ps
