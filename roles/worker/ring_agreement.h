// RingAgreement: how the members of a newly formed allreduce ring agree on
// where training continues (roles/worker/allreduce_worker.h). Each member
// fills its slot of a table (new member?, steps completed), the ring sums
// the tables (every other slot is zero), and every member reads the same
// decision from the sum: continue from the smallest step count among the
// members that are not new, taking the state of the lowest-ranked member
// at that count; when every member is new (the job's first ring), rank 0.
// Step counts travel as two floats each exact below 2^24, so counts up to
// 2^44 survive the float sum.
#pragma once

#include <cstdint>
#include <vector>

namespace edl::roles::worker {

struct MemberPosition {
  bool fresh = true;  // has never taken a ring's state
  int64_t steps = 0;  // optimizer steps completed
};

// A table of `world` slots with `rank`'s filled in, the rest zero.
std::vector<float> EncodePosition(int world, int rank, const MemberPosition& mine);

struct RingAgreement {
  int source = 0;     // the rank whose state every member takes
  int64_t steps = 0;  // the step count the ring continues from
  bool everyone_new = false;
};

// The decision from the summed table. REQUIRES: table.size() % 3 == 0 > 0.
RingAgreement Agree(const std::vector<float>& summed);

}  // namespace edl::roles::worker
