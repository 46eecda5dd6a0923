// SortByRow: orders a shard's (local row, index) keys for a sparse push, so
// that the optimizer sees each row once, rows ascending, with repeats summed
// in the order they came.
#pragma once

#include <cstdint>
#include <vector>

namespace edl::roles::ps {

// A key is (row << 32 | index), row and index below 2^32. Sorts `keys` by
// row, stably: keys of one row keep their order. An LSD radix sort, 11 bits
// of the row a pass, as many passes as rows below `num_rows` need (two up to
// 4 million rows), so a push's sort is linear in its rows; a comparison sort
// of the pairs was a fifth of a large push.
void SortByRow(std::vector<uint64_t>& keys, int64_t num_rows);

}  // namespace edl::roles::ps
