#include "roles/ps/row_sort.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace edl::roles::ps {

void SortByRow(std::vector<uint64_t>& keys, int64_t num_rows) {
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<uint64_t> other(keys.size());
  size_t count[kBuckets];
  for (int shift = 32; shift < 64 && ((num_rows - 1) >> (shift - 32)) > 0; shift += kBits) {
    std::fill(count, count + kBuckets, 0);
    for (uint64_t key : keys) ++count[(key >> shift) & (kBuckets - 1)];
    size_t sum = 0;
    for (size_t& c : count) sum += std::exchange(c, sum);
    for (uint64_t key : keys) other[count[(key >> shift) & (kBuckets - 1)]++] = key;
    keys.swap(other);
  }
}

}  // namespace edl::roles::ps
