// TaskCuts: how a data set's records are cut into tasks. Each file's
// records go in runs of `records_per_task` (a file's last run shorter), so
// a task never spans two files and a worker reads it with one reader. A
// single-file data set is cut as [0, k), [k, 2k), ... Record numbers are
// the data set's (files one after another). Plain value; lookups are
// O(log files), memory O(files).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace edl::roles::master {

class TaskCuts {
 public:
  TaskCuts() = default;
  // `file_records`: records per file (empty: one file of `records`); they
  // must sum to `records`. REQUIRES: records_per_task > 0.
  TaskCuts(int64_t records, const std::vector<int64_t>& file_records, int64_t records_per_task);

  int64_t num_tasks() const { return task_starts_.empty() ? 0 : task_starts_.back(); }
  int64_t records() const { return record_starts_.empty() ? 0 : record_starts_.back(); }
  // Task `task`'s records [begin, end). REQUIRES: 0 <= task < num_tasks().
  std::pair<int64_t, int64_t> Range(int64_t task) const;
  // The task holding `record`. REQUIRES: 0 <= record < records().
  int64_t TaskOf(int64_t record) const;

 private:
  int64_t per_task_ = 1;
  std::vector<int64_t> record_starts_;  // [f]: first record of file f; back(): all
  std::vector<int64_t> task_starts_;    // [f]: first task of file f; back(): all
};

}  // namespace edl::roles::master
