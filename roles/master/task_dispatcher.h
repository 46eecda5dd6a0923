// TaskDispatcher: dynamic data sharding (docs/distributed.md; ElasticDL's task manager
// done better). Each data set is cut into tasks of `records_per_task`
// records [begin, end) (a file's last one shorter; no task spans two files:
// roles/master/task_cuts.h). Training tasks come one epoch
// at a time in a seeded shuffled order (epoch e from seed + e); epoch e + 1
// is created only when all of epoch e's tasks are handed out, so a task's
// epoch means what it says. Evaluation rounds are queued on demand and take
// priority over training, which takes priority over prediction.
//
// A handed-out task is leased: (worker, deadline). A lease ends with the
// worker's report (done; or failed: back of the queue), with Reclaim (the
// worker died or left: front of the queue) or when its deadline passes on
// Tick (front of the queue). A task that failed max_task_failures times, or
// was lost max_task_losses times, fails the job with a message naming the
// records, instead of looping over poison data.
//
// A done training task can be queued again as a redo (Redo): its report
// then completes no epoch and says `redo`.
//
// Cost: GetTask, ReportTask O(log doing) (no scan over tasks); Reclaim
// O(tasks of the worker); Tick O(expired · log doing). Memory: the tasks of
// the live epoch(s), rounds and predictions; done tasks are only counted.
//
// Not thread-safe (MasterCore guards it). Times are Clock nanoseconds.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "roles/master/master_options.h"
#include "roles/master/task_cuts.h"
#include "roles/protocol/messages.h"

namespace edl::roles::protocol {
class Reader;
class Writer;
}  // namespace edl::roles::protocol

namespace edl::roles::master {

using protocol::Dataset;
using protocol::Task;
using protocol::TaskType;

struct DispatcherOptions {
  DatasetSizes records;
  int64_t records_per_task = 512;  // > 0
  int num_epochs = 1;              // >= 1
  int64_t lease_timeout_nanos = 600'000'000'000;
  int max_task_failures = 3;  // >= 1
  int max_task_losses = 5;    // 0 = unlimited
  uint64_t seed = 0;
  // false: an epoch's tasks are handed out in record order (and workers keep
  // the records of a task in order), for runs that must match local training
  // with --shuffle=false step for step.
  bool shuffle = true;
};

// How a worker ended its lease.
enum class TaskResult {
  kSucceeded,
  kFailed,      // counts toward max_task_failures; back of the queue
  kHandedBack,  // a worker asked to leave returns it unfinished: front, no
                // count
};

enum class ReclaimReason {
  kLost,        // the worker died or its lease expired: counts as a loss
  kHandedBack,  // the worker left as asked: no count
};

struct TaskCounts {
  int64_t todo = 0;  // queued, plus training tasks of epochs not created yet
  int64_t doing = 0;
  int64_t done = 0;
};

struct ReportOutcome {
  // The report ended the worker's lease on the task. When false (a task no
  // longer leased to this worker, e.g. reclaimed, or already done) the
  // dispatcher changed nothing.
  bool accepted = false;
  // The reported task, decoded from its id even when not accepted (for the
  // ledger: a late report still trained its records); nullopt for ids the
  // dispatcher never issued. model_version is 0 for unaccepted ones.
  std::optional<Task> task;
  // Set when this report completed the last task of a training epoch.
  std::optional<int> epoch_completed;
  // Set when this report completed all training of the job.
  bool training_completed = false;
  // The task was done before and ran again because a PS lost its updates
  // (TaskDispatcher::Redo): its records were trained once more on that PS
  // only, not once more for the epoch.
  bool redo = false;
};

class TaskDispatcher {
 public:
  // REQUIRES: valid options (see ValidateMasterOptions). Prediction tasks are
  // queued at once; training starts with epoch 1.
  explicit TaskDispatcher(const DispatcherOptions& options);

  // The next task for `worker_id`, leased until now + lease_timeout; kWait
  // when nothing is queued but tasks are in flight (or evaluation may come);
  // kDone when everything is finished or the job failed.
  Task GetTask(int64_t worker_id, int64_t now_nanos);

  // See ReportOutcome. `error` is kept as the task's last error on kFailed.
  ReportOutcome ReportTask(int64_t worker_id, int64_t task_id, TaskResult result,
                           const std::string& error = "");

  // Puts all of the worker's leased tasks back at the front of their queues;
  // returns how many.
  int Reclaim(int64_t worker_id, ReclaimReason reason);

  // Reclaims leases whose deadline is <= now (as losses); returns how many
  // and adds their ids to *expired when given.
  int Tick(int64_t now_nanos, std::vector<int64_t>* expired = nullptr);
  // Reclaims the lease of one task as Tick does when its deadline passes
  // (replaying a Tick); false if the task is not leased.
  bool Expire(int64_t task_id);
  // The task if it is leased to `worker_id` now.
  std::optional<Task> LeasedTo(int64_t worker_id, int64_t task_id) const;

  // The durable state (roles/master/master_state.cc): the epoch and rounds
  // created, every task not done with its lease holder and counts, the
  // queues in order. Load replaces it; leases restored run from `now_nanos`.
  // Errors (a task id that names no task) go to the reader.
  void Save(protocol::Writer& w) const;
  void Load(protocol::Reader& r, int64_t now_nanos);

  // Queues one evaluation task per validation task for `model_version`;
  // returns how many (0 without validation data).
  int64_t CreateEvaluationRound(int64_t model_version);

  // The training tasks done so far (every epoch created), ascending ids.
  // O(epochs created x tasks per epoch).
  std::vector<int64_t> DoneTrainingTasks() const;
  // Queues done training tasks again, at the front, as redos: a PS restored
  // from a checkpoint lacks their updates (docs/distributed.md, 'A PS
  // loss'). Ids not done (queued, leased, never issued) are skipped; returns
  // the tasks queued. Training is not done until every redo is.
  int64_t Redo(const std::vector<int64_t>& task_ids);

  // The task an id names (any state), nullopt for ids never issued.
  std::optional<Task> TaskOf(int64_t task_id) const { return Decode(task_id); }
  // Every task of `type` leased now, ascending ids. O(live tasks).
  std::vector<int64_t> Leased(TaskType type) const;

  // The tasks leased to the worker, oldest first.
  std::vector<Task> LeasesOf(int64_t worker_id) const;

  TaskCounts Counts(TaskType type) const;
  // Nothing queued or in flight and every epoch created.
  bool AllDone() const;
  bool TrainingDone() const;
  // The newest training epoch created (1-based; 0 without training data).
  int current_epoch() const { return epoch_; }
  int64_t tasks_in(Dataset dataset) const;  // tasks per epoch / round
  int64_t records_per_task() const { return options_.records_per_task; }

  // Poison data: set once, then every GetTask answers kDone.
  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }

  // "training data records [4096, 4608)".
  static std::string Describe(const Task& task);

 private:
  struct Entry {
    Task task;
    int64_t worker = 0;  // 0 while queued
    int64_t deadline = 0;
    int failures = 0;
    int losses = 0;
    bool redo = false;
  };

  void CreateEpoch(int epoch);
  std::optional<Task> Decode(int64_t task_id) const;
  void EndLease(Entry& entry);
  void Requeue(Entry& entry, bool front);
  void Lose(Entry& entry, const char* how);
  std::deque<int64_t>& QueueOf(TaskType type);

  DispatcherOptions options_;
  TaskCuts cuts_[3];  // by Dataset
  int epoch_ = 0;
  int64_t rounds_ = 0;
  std::string failure_;
  // Every task not yet done, queued or leased.
  std::unordered_map<int64_t, Entry> live_;
  std::deque<int64_t> training_queue_, evaluation_queue_, prediction_queue_;
  std::set<std::pair<int64_t, int64_t>> deadlines_;           // (deadline, task id)
  std::unordered_map<int64_t, std::vector<int64_t>> leases_;  // worker -> ids
  // Indexed by TaskType (kTraining, kEvaluation, kPrediction).
  int64_t doing_[4] = {}, done_[4] = {}, queued_[4] = {};
  // Training tasks of each epoch not yet done (epochs with some left).
  std::unordered_map<int, int64_t> epoch_left_;
  int64_t redo_left_ = 0;  // redo tasks not done yet
};

}  // namespace edl::roles::master
