#include "roles/ps/applied_pushes.h"

#include <iterator>
#include <string>

namespace edl::roles::ps {

bool AppliedPushes::SettledLocked(int64_t task_id) const {
  auto it = settled_.upper_bound(task_id);
  return it != settled_.begin() && std::prev(it)->second >= task_id;
}

AppliedPushes::Claim AppliedPushes::Take(int64_t task_id, int64_t index) {
  if (task_id == 0) return {true, false, 0};
  std::lock_guard<std::mutex> lock(mu_);
  if (SettledLocked(task_id)) return {false, false, kSettled};
  int64_t& taken = taken_[task_id];
  if (index < taken) return {false, false, taken};
  if (index > taken) return {false, true, taken};
  taken = index + 1;
  return {true, false, taken};
}

int64_t AppliedPushes::Taken(int64_t task_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (task_id != 0 && SettledLocked(task_id)) return kSettled;
  auto it = taken_.find(task_id);
  return it == taken_.end() ? 0 : it->second;
}

bool AppliedPushes::Settle(int64_t task_id, int64_t minibatches) {
  if (task_id <= 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (SettledLocked(task_id)) return true;
  auto it = taken_.find(task_id);
  if (minibatches > 0 && (it == taken_.end() || it->second < minibatches)) return false;
  if (it != taken_.end()) taken_.erase(it);
  int64_t first = task_id, last = task_id;
  // Merge with the range ending right before and the one starting right after.
  auto after = settled_.upper_bound(task_id);
  if (after != settled_.begin()) {
    auto before = std::prev(after);
    if (before->second == task_id - 1) {
      first = before->first;
      settled_.erase(before);
    }
  }
  if (after != settled_.end() && after->first == task_id + 1) {
    last = after->second;
    settled_.erase(after);
  }
  settled_[first] = last;
  return true;
}

size_t AppliedPushes::tasks_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return taken_.size();
}

size_t AppliedPushes::settled_ranges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settled_.size();
}

AppliedPushes::State AppliedPushes::Export() const {
  std::lock_guard<std::mutex> lock(mu_);
  State state;
  state.taken.assign(taken_.begin(), taken_.end());
  state.settled.assign(settled_.begin(), settled_.end());
  return state;
}

AppliedPushes::State AppliedPushes::WithoutClaims(
    State state, const std::vector<std::pair<int64_t, int64_t>>& claims) {
  if (claims.empty()) return state;
  std::map<int64_t, int64_t> taken(state.taken.begin(), state.taken.end());
  std::map<int64_t, int64_t> settled(state.settled.begin(), state.settled.end());
  for (const auto& [task, minibatch] : claims) {
    auto range = settled.upper_bound(task);
    if (range != settled.begin() && std::prev(range)->second >= task) {
      // Split [first, last] around the task.
      const auto [first, last] = *std::prev(range);
      settled.erase(std::prev(range));
      if (first < task) settled[first] = task - 1;
      if (task < last) settled[task + 1] = last;
      taken[task] = minibatch;
      continue;
    }
    auto it = taken.find(task);
    if (it != taken.end() && it->second > minibatch) it->second = minibatch;
  }
  state.taken.assign(taken.begin(), taken.end());
  state.settled.assign(settled.begin(), settled.end());
  return state;
}

Status AppliedPushes::Import(const State& state) {
  std::map<int64_t, int64_t> taken, settled;
  for (const auto& [task, count] : state.taken) {
    if (task <= 0 || count < 0 || !taken.emplace(task, count).second) {
      return InvalidArgument("applied pushes: bad entry (task " + std::to_string(task) +
                             ", count " + std::to_string(count) + ")");
    }
  }
  int64_t last_end = 0;
  for (const auto& [first, last] : state.settled) {
    if (first <= last_end || last < first) {
      return InvalidArgument("applied pushes: settled range [" + std::to_string(first) + ", " +
                             std::to_string(last) + "] is not after the one before it");
    }
    settled.emplace(first, last);
    last_end = last;
  }
  std::lock_guard<std::mutex> lock(mu_);
  taken_ = std::move(taken);
  settled_ = std::move(settled);
  return Status::Ok();
}

}  // namespace edl::roles::ps
