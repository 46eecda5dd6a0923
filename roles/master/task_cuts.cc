#include "roles/master/task_cuts.h"

#include <algorithm>

#include "base/check.h"

namespace edl::roles::master {

TaskCuts::TaskCuts(int64_t records, const std::vector<int64_t>& file_records,
                   int64_t records_per_task)
    : per_task_(records_per_task) {
  EDL_CHECK_GT(records_per_task, 0);
  record_starts_.push_back(0);
  task_starts_.push_back(0);
  const std::vector<int64_t> one{records};
  for (int64_t n : file_records.empty() ? one : file_records) {
    EDL_CHECK_GE(n, 0);
    if (n == 0) continue;  // an empty file holds no task
    record_starts_.push_back(record_starts_.back() + n);
    task_starts_.push_back(task_starts_.back() + (n + per_task_ - 1) / per_task_);
  }
  EDL_CHECK_EQ(record_starts_.back(), records) << "file record counts do not sum to the data set's";
}

std::pair<int64_t, int64_t> TaskCuts::Range(int64_t task) const {
  EDL_CHECK(task >= 0 && task < num_tasks()) << "task " << task;
  const size_t f = static_cast<size_t>(
      std::upper_bound(task_starts_.begin(), task_starts_.end(), task) - task_starts_.begin() - 1);
  const int64_t begin = record_starts_[f] + (task - task_starts_[f]) * per_task_;
  return {begin, std::min(begin + per_task_, record_starts_[f + 1])};
}

int64_t TaskCuts::TaskOf(int64_t record) const {
  EDL_CHECK(record >= 0 && record < records()) << "record " << record;
  const size_t f =
      static_cast<size_t>(std::upper_bound(record_starts_.begin(), record_starts_.end(), record) -
                          record_starts_.begin() - 1);
  return task_starts_[f] + (record - record_starts_[f]) / per_task_;
}

}  // namespace edl::roles::master
