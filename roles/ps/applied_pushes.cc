#include "roles/ps/applied_pushes.h"

#include <iterator>

namespace edl::roles::ps {

bool AppliedPushes::SettledLocked(int64_t task_id) const {
  auto it = settled_.upper_bound(task_id);
  return it != settled_.begin() && std::prev(it)->second >= task_id;
}

AppliedPushes::Claim AppliedPushes::Take(int64_t task_id, int64_t index) {
  if (task_id == 0) return {true, 0};
  std::lock_guard<std::mutex> lock(mu_);
  if (SettledLocked(task_id)) return {false, kSettled};
  int64_t& taken = taken_[task_id];
  if (index < taken) return {false, taken};
  taken = index + 1;
  return {true, taken};
}

int64_t AppliedPushes::Taken(int64_t task_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (task_id != 0 && SettledLocked(task_id)) return kSettled;
  auto it = taken_.find(task_id);
  return it == taken_.end() ? 0 : it->second;
}

void AppliedPushes::Settle(int64_t task_id) {
  if (task_id <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  taken_.erase(task_id);
  if (SettledLocked(task_id)) return;
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
}

size_t AppliedPushes::tasks_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return taken_.size();
}

size_t AppliedPushes::settled_ranges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settled_.size();
}

}  // namespace edl::roles::ps
