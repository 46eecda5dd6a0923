// AppliedPushes: which minibatches of which training task a PS has taken,
// so that each is applied at most once (effectively-once updates,
// docs/distributed.md). A worker names every push (task id, minibatch
// index in the task, from 0); it pushes a task's minibatches in order,
// one at a time, so what a PS has taken of a task is a prefix: a count.
// A push whose minibatch is below the count was taken before (a retried
// push whose answer was lost, a task retried after its worker died): it is
// dropped and answered with the count, so that a worker retrying a task
// resumes after what every PS holds.
//
// A push beyond the count (a PS restored from a checkpoint lacks the
// minibatches it took after it) is refused as `behind`: applying it would
// leave the ones before it missing on this PS, so the worker runs the task
// again from where every PS has it.
//
// A task is settled once its report is durable at the master (its worker
// says so with its next push, PushGradientsRequest::settled_task): its
// count is dropped and every later push for it is refused as taken (a hung
// worker waking after its task was done elsewhere). Settled tasks are kept
// as ranges of ids (task ids of an epoch are consecutive and settle mostly
// in order), so memory grows with the gaps between them, not with the
// tasks: the counts of the tasks in flight, plus a few ranges. Thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/status.h"

namespace edl::roles::ps {

class AppliedPushes {
 public:
  // What Taken answers for a settled task: more than any task's minibatches.
  static constexpr int64_t kSettled = std::numeric_limits<int64_t>::max();

  struct Claim {
    bool apply = true;    // false: taken before (or settled), or behind
    bool behind = false;  // beyond the count: minibatches before it are missing
    int64_t taken = 0;    // the task's minibatches taken, after this claim
  };
  // Claims minibatch `index` of `task_id` (task_id 0: an unnamed push,
  // always applied).
  Claim Take(int64_t task_id, int64_t index);
  // The count, without claiming (0 for a task never pushed, kSettled for a
  // settled one).
  int64_t Taken(int64_t task_id) const;
  // The task is done for good (task_id > 0), after `minibatches` pushes:
  // settled if this PS took them all (or minibatches is 0). A PS restored
  // from a checkpoint may lack some or all of them: then it keeps what it
  // has, unsettled, for the master to queue the task again (a redo), and
  // answers false.
  bool Settle(int64_t task_id, int64_t minibatches = 0);
  // Tasks with a count; ranges of settled task ids.
  size_t tasks_in_flight() const;
  size_t settled_ranges() const;

  // The whole state, for PS checkpoints: (task id, count) of the tasks in
  // flight, and the settled [first, last] ranges, both ascending.
  struct State {
    std::vector<std::pair<int64_t, int64_t>> taken;
    std::vector<std::pair<int64_t, int64_t>> settled;
  };
  State Export() const;
  // `state` as it was before the claims (task id, minibatch) were taken:
  // each task's count back to the claim's minibatch, settled or not (a
  // sync round's pushes are taken when they arrive but applied with the
  // round, so a checkpoint of the weights before the round must not count
  // them).
  static State WithoutClaims(State state, const std::vector<std::pair<int64_t, int64_t>>& claims);
  // Replaces the state; InvalidArgument naming the entry when ids are not
  // positive, counts negative, or ranges unordered or overlapping.
  Status Import(const State& state);

 private:
  bool SettledLocked(int64_t task_id) const;

  mutable std::mutex mu_;
  std::map<int64_t, int64_t> taken_;    // task id -> count; guarded by mu_
  std::map<int64_t, int64_t> settled_;  // [first, last] id ranges, disjoint, not adjacent
};

}  // namespace edl::roles::ps
