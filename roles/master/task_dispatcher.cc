#include "roles/master/task_dispatcher.h"

#include <algorithm>
#include <random>
#include <tuple>

#include "base/check.h"
#include "roles/protocol/task_name.h"

namespace edl::roles::master {
namespace {

// A task id names its task without any table: type (bits 60-61), epoch or
// evaluation round (bits 32-59), index in the data set (bits 0-31). So a late
// report is decoded even after the task was forgotten.
constexpr int kTypeShift = 60;
constexpr int kGroupShift = 32;
constexpr int64_t kGroupMask = (int64_t{1} << 28) - 1;
constexpr int64_t kIndexMask = (int64_t{1} << 32) - 1;

int64_t EncodeId(TaskType type, int64_t group, int64_t index) {
  return (static_cast<int64_t>(type) << kTypeShift) | (group << kGroupShift) | index;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Dataset DatasetOf(TaskType type) {
  switch (type) {
    case TaskType::kEvaluation: return Dataset::kValidation;
    case TaskType::kPrediction: return Dataset::kPrediction;
    default: return Dataset::kTraining;
  }
}

int Index(TaskType type) { return static_cast<int>(type) & 3; }

}  // namespace

TaskDispatcher::TaskDispatcher(const DispatcherOptions& options) : options_(options) {
  EDL_CHECK_GT(options_.records_per_task, 0);
  const DatasetSizes& r = options_.records;
  const int64_t k = options_.records_per_task;
  cuts_[static_cast<int>(Dataset::kTraining)] = TaskCuts(r.training, r.training_files, k);
  cuts_[static_cast<int>(Dataset::kValidation)] = TaskCuts(r.validation, r.validation_files, k);
  cuts_[static_cast<int>(Dataset::kPrediction)] = TaskCuts(r.prediction, r.prediction_files, k);
  EDL_CHECK_GE(options_.num_epochs, 1);
  EDL_CHECK_GE(options_.max_task_failures, 1);
  for (Dataset d : {Dataset::kTraining, Dataset::kValidation, Dataset::kPrediction}) {
    EDL_CHECK_LE(tasks_in(d), kIndexMask) << "too many tasks";
  }
  const int64_t n = tasks_in(Dataset::kPrediction);
  for (int64_t i = 0; i < n; ++i) {
    Task t = *Decode(EncodeId(TaskType::kPrediction, 0, i));
    live_.emplace(t.id, Entry{t});
    prediction_queue_.push_back(t.id);
  }
  queued_[Index(TaskType::kPrediction)] = n;
}

int64_t TaskDispatcher::tasks_in(Dataset dataset) const {
  return cuts_[static_cast<int>(dataset)].num_tasks();
}

std::optional<Task> TaskDispatcher::Decode(int64_t task_id) const {
  if (task_id <= 0) return std::nullopt;
  const auto type = static_cast<TaskType>(task_id >> kTypeShift);
  const int64_t group = (task_id >> kGroupShift) & kGroupMask;
  const int64_t index = task_id & kIndexMask;
  Task t;
  t.id = task_id;
  t.type = type;
  switch (type) {
    case TaskType::kTraining:
      if (group < 1 || group > epoch_) return std::nullopt;
      t.epoch = static_cast<int32_t>(group);
      break;
    case TaskType::kEvaluation:
      if (group < 1 || group > rounds_) return std::nullopt;
      t.epoch = epoch_;
      break;
    case TaskType::kPrediction:
      if (group != 0) return std::nullopt;
      break;
    default: return std::nullopt;
  }
  t.dataset = DatasetOf(type);
  if (index >= tasks_in(t.dataset)) return std::nullopt;
  std::tie(t.begin, t.end) = cuts_[static_cast<int>(t.dataset)].Range(index);
  t.seed = SplitMix64(options_.seed ^ SplitMix64(static_cast<uint64_t>(task_id)));
  return t;
}

void TaskDispatcher::CreateEpoch(int epoch) {
  const int64_t n = tasks_in(Dataset::kTraining);
  EDL_CHECK_LE(epoch, kGroupMask);
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  // Fisher-Yates with a fully specified generator, so the order is the same
  // on every platform (std::shuffle's algorithm is unspecified).
  std::mt19937_64 rng(options_.seed + static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0 && options_.shuffle; --i) {
    std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  }
  epoch_ = epoch;
  for (int64_t index : order) {
    Task t = *Decode(EncodeId(TaskType::kTraining, epoch, index));
    live_.emplace(t.id, Entry{t});
    training_queue_.push_back(t.id);
  }
  queued_[Index(TaskType::kTraining)] += n;
  epoch_left_[epoch] = n;
}

int64_t TaskDispatcher::CreateEvaluationRound(int64_t model_version) {
  const int64_t n = tasks_in(Dataset::kValidation);
  if (n == 0) return 0;
  ++rounds_;
  EDL_CHECK_LE(rounds_, kGroupMask);
  for (int64_t i = 0; i < n; ++i) {
    Task t = *Decode(EncodeId(TaskType::kEvaluation, rounds_, i));
    t.model_version = model_version;
    live_.emplace(t.id, Entry{t});
    evaluation_queue_.push_back(t.id);
  }
  queued_[Index(TaskType::kEvaluation)] += n;
  return n;
}

std::deque<int64_t>& TaskDispatcher::QueueOf(TaskType type) {
  switch (type) {
    case TaskType::kEvaluation: return evaluation_queue_;
    case TaskType::kPrediction: return prediction_queue_;
    default: return training_queue_;
  }
}

Task TaskDispatcher::GetTask(int64_t worker_id, int64_t now_nanos) {
  Task none;
  if (failed()) {
    none.type = TaskType::kDone;
    return none;
  }
  if (evaluation_queue_.empty() && training_queue_.empty() && epoch_ < options_.num_epochs &&
      tasks_in(Dataset::kTraining) > 0) {
    CreateEpoch(epoch_ + 1);
  }
  std::deque<int64_t>* queue = nullptr;
  for (auto* q : {&evaluation_queue_, &training_queue_, &prediction_queue_}) {
    if (!q->empty()) {
      queue = q;
      break;
    }
  }
  if (queue == nullptr) {
    none.type = AllDone() ? TaskType::kDone : TaskType::kWait;
    return none;
  }
  const int64_t id = queue->front();
  queue->pop_front();
  auto it = live_.find(id);
  EDL_CHECK(it != live_.end()) << "queued task " << id << " is not live";
  Entry& e = it->second;
  EDL_CHECK_EQ(e.worker, 0);
  e.worker = worker_id;
  e.deadline = now_nanos + options_.lease_timeout_nanos;
  deadlines_.emplace(e.deadline, id);
  leases_[worker_id].push_back(id);
  --queued_[Index(e.task.type)];
  ++doing_[Index(e.task.type)];
  return e.task;
}

void TaskDispatcher::EndLease(Entry& e) {
  auto it = leases_.find(e.worker);
  EDL_CHECK(it != leases_.end());
  auto& ids = it->second;
  ids.erase(std::find(ids.begin(), ids.end(), e.task.id));
  if (ids.empty()) leases_.erase(it);
  deadlines_.erase({e.deadline, e.task.id});
  --doing_[Index(e.task.type)];
  e.worker = 0;
}

void TaskDispatcher::Requeue(Entry& e, bool front) {
  auto& q = QueueOf(e.task.type);
  if (front) {
    q.push_front(e.task.id);
  } else {
    q.push_back(e.task.id);
  }
  ++queued_[Index(e.task.type)];
}

void TaskDispatcher::Lose(Entry& e, const char* how) {
  ++e.losses;
  if (options_.max_task_losses > 0 && e.losses >= options_.max_task_losses && !failed()) {
    failure_ = Describe(e.task) + " were lost " + std::to_string(e.losses) + " times (" + how +
               "); do these records crash or hang the worker?";
  }
}

ReportOutcome TaskDispatcher::ReportTask(int64_t worker_id, int64_t task_id, TaskResult result,
                                         const std::string& error) {
  ReportOutcome out;
  out.task = Decode(task_id);
  if (!out.task) return out;
  auto it = live_.find(task_id);
  if (it == live_.end() || it->second.worker != worker_id || worker_id == 0) {
    return out;
  }
  Entry& e = it->second;
  out.accepted = true;
  out.task = e.task;
  EndLease(e);
  const TaskType type = e.task.type;
  switch (result) {
    case TaskResult::kSucceeded: {
      ++done_[Index(type)];
      if (e.redo) {
        out.redo = true;
        --redo_left_;
      } else if (type == TaskType::kTraining) {
        const int epoch = e.task.epoch;
        auto left = epoch_left_.find(epoch);
        EDL_CHECK(left != epoch_left_.end());
        if (--left->second == 0) {
          epoch_left_.erase(left);
          out.epoch_completed = epoch;
        }
      }
      live_.erase(it);
      out.training_completed = type == TaskType::kTraining && TrainingDone();
      break;
    }
    case TaskResult::kFailed:
      ++e.failures;
      if (e.failures >= options_.max_task_failures && !failed()) {
        failure_ = Describe(e.task) + " failed " +
                   (e.failures == 1 ? "once" : std::to_string(e.failures) + " times") + ": " +
                   protocol::WithoutTaskRangeName(e.task, error);
      }
      Requeue(e, /*front=*/false);
      break;
    case TaskResult::kHandedBack: Requeue(e, /*front=*/true); break;
  }
  return out;
}

int TaskDispatcher::Reclaim(int64_t worker_id, ReclaimReason reason) {
  auto it = leases_.find(worker_id);
  if (it == leases_.end()) return 0;
  std::vector<int64_t> ids = std::move(it->second);
  leases_.erase(it);
  // Newest first, so that the oldest ends up at the very front.
  for (auto id = ids.rbegin(); id != ids.rend(); ++id) {
    Entry& e = live_.at(*id);
    deadlines_.erase({e.deadline, e.task.id});
    --doing_[Index(e.task.type)];
    e.worker = 0;
    if (reason == ReclaimReason::kLost) Lose(e, "its worker died");
    Requeue(e, /*front=*/true);
  }
  return static_cast<int>(ids.size());
}

int TaskDispatcher::Tick(int64_t now_nanos, std::vector<int64_t>* expired) {
  int n = 0;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now_nanos) {
    const int64_t id = deadlines_.begin()->second;
    Expire(id);
    if (expired != nullptr) expired->push_back(id);
    ++n;
  }
  return n;
}

bool TaskDispatcher::Expire(int64_t task_id) {
  auto it = live_.find(task_id);
  if (it == live_.end() || it->second.worker == 0) return false;
  Entry& e = it->second;
  EndLease(e);
  Lose(e, "its lease expired");
  Requeue(e, /*front=*/true);
  return true;
}

std::vector<int64_t> TaskDispatcher::DoneTrainingTasks() const {
  std::vector<int64_t> ids;
  const int64_t n = tasks_in(Dataset::kTraining);
  for (int epoch = 1; epoch <= epoch_; ++epoch) {
    for (int64_t index = 0; index < n; ++index) {
      const int64_t id = EncodeId(TaskType::kTraining, epoch, index);
      if (!live_.count(id)) ids.push_back(id);
    }
  }
  return ids;
}

int64_t TaskDispatcher::Redo(const std::vector<int64_t>& task_ids) {
  int64_t queued = 0;
  // In reverse, so that the first ends up at the very front.
  for (auto id = task_ids.rbegin(); id != task_ids.rend(); ++id) {
    std::optional<Task> t = Decode(*id);
    if (!t || t->type != TaskType::kTraining || live_.count(*id)) continue;
    Entry e{*t};
    e.redo = true;
    Requeue(live_.emplace(*id, e).first->second, /*front=*/true);
    --done_[Index(TaskType::kTraining)];
    ++redo_left_;
    ++queued;
  }
  return queued;
}

std::vector<int64_t> TaskDispatcher::Leased(TaskType type) const {
  std::vector<int64_t> ids;
  for (const auto& [id, e] : live_) {
    if (e.worker != 0 && e.task.type == type) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::optional<Task> TaskDispatcher::LeasedTo(int64_t worker_id, int64_t task_id) const {
  auto it = live_.find(task_id);
  if (it == live_.end() || worker_id == 0 || it->second.worker != worker_id) return std::nullopt;
  return it->second.task;
}

std::vector<Task> TaskDispatcher::LeasesOf(int64_t worker_id) const {
  std::vector<Task> tasks;
  auto it = leases_.find(worker_id);
  if (it == leases_.end()) return tasks;
  for (int64_t id : it->second) tasks.push_back(live_.at(id).task);
  return tasks;
}

TaskCounts TaskDispatcher::Counts(TaskType type) const {
  TaskCounts c;
  const int i = Index(type);
  c.todo = queued_[i];
  if (type == TaskType::kTraining) {
    c.todo += (options_.num_epochs - epoch_) * tasks_in(Dataset::kTraining);
  }
  c.doing = doing_[i];
  c.done = done_[i];
  return c;
}

bool TaskDispatcher::TrainingDone() const {
  return tasks_in(Dataset::kTraining) == 0 ||
         (epoch_ == options_.num_epochs && epoch_left_.empty() && redo_left_ == 0);
}

bool TaskDispatcher::AllDone() const { return live_.empty() && TrainingDone(); }

std::string TaskDispatcher::Describe(const Task& task) { return protocol::TaskRangeName(task); }

}  // namespace edl::roles::master
