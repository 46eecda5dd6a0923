#include "roles/ps/row_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace edl::roles::ps {
namespace {

uint64_t Key(uint64_t row, uint64_t index) { return row << 32 | index; }

// The keys `SortByRow` must give: by row, equal rows in index order.
std::vector<uint64_t> StableByRow(std::vector<uint64_t> keys) {
  std::stable_sort(keys.begin(), keys.end(),
                   [](uint64_t a, uint64_t b) { return a >> 32 < b >> 32; });
  return keys;
}

// Rows drawn from [0, num_rows) with repeats; index k at position k.
std::vector<uint64_t> RandomKeys(int64_t n, int64_t num_rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> row(0, num_rows - 1);
  std::vector<uint64_t> keys;
  for (int64_t k = 0; k < n; ++k) keys.push_back(Key(row(rng), k));
  return keys;
}

TEST(SortByRow, OrdersRowsAndKeepsTheIndicesOfARowInOrder) {
  // One pass (below 2048 rows), two, and three (beyond 4 million rows).
  for (int64_t num_rows : {1, 7, 2048, 2049, 100000, 4194304, 5000000}) {
    SCOPED_TRACE("rows " + std::to_string(num_rows));
    std::vector<uint64_t> keys = RandomKeys(20000, num_rows, num_rows);
    const std::vector<uint64_t> want = StableByRow(keys);
    SortByRow(keys, num_rows);
    EXPECT_EQ(keys, want);
  }
}

TEST(SortByRow, StableWhenTheIndicesOfARowComeDescending) {
  // Indices that are not ascending in the input stay in their input order.
  std::vector<uint64_t> keys = {Key(3000, 9), Key(5, 8), Key(3000, 2), Key(5, 1), Key(0, 7)};
  SortByRow(keys, 3001);
  EXPECT_EQ(keys,
            (std::vector<uint64_t>{Key(0, 7), Key(5, 8), Key(5, 1), Key(3000, 9), Key(3000, 2)}));
}

TEST(SortByRow, LeavesNoKeysAndOneKeyAsTheyAre) {
  std::vector<uint64_t> none;
  SortByRow(none, 10);
  EXPECT_TRUE(none.empty());
  std::vector<uint64_t> one = {Key(9, 4)};
  SortByRow(one, 10);
  EXPECT_EQ(one, std::vector<uint64_t>{Key(9, 4)});
}

}  // namespace
}  // namespace edl::roles::ps
