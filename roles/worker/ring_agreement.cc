#include "roles/worker/ring_agreement.h"

#include "base/check.h"

namespace edl::roles::worker {
namespace {
constexpr int kLowBits = 20;
}  // namespace

std::vector<float> EncodePosition(int world, int rank, const MemberPosition& mine) {
  EDL_CHECK(rank >= 0 && rank < world) << "rank " << rank << " of " << world;
  std::vector<float> table(3 * static_cast<size_t>(world), 0.f);
  table[3 * rank] = mine.fresh ? 1.f : 0.f;
  table[3 * rank + 1] = static_cast<float>(mine.steps >> kLowBits);
  table[3 * rank + 2] = static_cast<float>(mine.steps & ((int64_t{1} << kLowBits) - 1));
  return table;
}

RingAgreement Agree(const std::vector<float>& summed) {
  EDL_CHECK(!summed.empty() && summed.size() % 3 == 0) << "table of " << summed.size();
  RingAgreement a;
  a.source = -1;
  const int world = static_cast<int>(summed.size() / 3);
  for (int i = 0; i < world; ++i) {
    if (summed[3 * i] != 0.f) continue;
    const int64_t steps = (static_cast<int64_t>(summed[3 * i + 1]) << kLowBits) +
                          static_cast<int64_t>(summed[3 * i + 2]);
    if (a.source < 0 || steps < a.steps) {
      a.source = i;
      a.steps = steps;
    }
  }
  if (a.source < 0) {
    a.source = 0;
    a.everyone_new = true;
    a.steps = (static_cast<int64_t>(summed[1]) << kLowBits) + static_cast<int64_t>(summed[2]);
  }
  return a;
}

}  // namespace edl::roles::worker
