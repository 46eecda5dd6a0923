#include "roles/master/master_core.h"

#include <algorithm>
#include <cstdio>

#include "base/logging.h"
#include "roles/master/master_events.h"
#include "roles/protocol/task_name.h"

namespace edl::roles::master {

using protocol::GetTaskRequest;
using protocol::HeartbeatRequest;
using protocol::HeartbeatResponse;
using protocol::RegisterWorkerRequest;
using protocol::RegisterWorkerResponse;
using protocol::ReportTaskRequest;
using protocol::ReportTaskResponse;

namespace {

int64_t Nanos(double seconds) { return static_cast<int64_t>(seconds * 1e9); }

DispatcherOptions DispatcherOptionsOf(const MasterOptions& o) {
  DispatcherOptions d;
  d.records = o.records;
  d.records_per_task = o.minibatch_size * o.num_minibatches_per_task;
  d.num_epochs = o.num_epochs;
  d.lease_timeout_nanos = Nanos(o.lease_timeout_s);
  d.max_task_failures = o.max_task_failures;
  d.max_task_losses = o.max_task_losses;
  d.seed = o.seed;
  d.shuffle = o.shuffle;
  return d;
}

}  // namespace

int64_t WallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status NeverRegistered(int64_t id) {
  return FailedPrecondition("worker id " + std::to_string(id) +
                            " was never registered with this master");
}

namespace {

std::string WorkerName(const WorkerInfo& w) {
  return w.name + " (id " + std::to_string(w.id) + ")";
}

}  // namespace

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kRunning: return "running";
    case JobState::kSucceeded: return "succeeded";
    case JobState::kFailed: return "failed";
  }
  return "?";
}

Result<std::unique_ptr<MasterCore>> MasterCore::Create(const MasterOptions& options,
                                                       const Clock& clock) {
  EDL_RETURN_IF_ERROR(ValidateMasterOptions(options));
  auto core = std::make_unique<MasterCore>(options, clock);
  if (!options.state_dir.empty()) EDL_RETURN_IF_ERROR(core->OpenState());
  return core;
}

MasterCore::MasterCore(const MasterOptions& options, const Clock& clock)
    : options_(options),
      clock_(clock),
      dispatcher_(DispatcherOptionsOf(options)),
      membership_(Nanos(options.heartbeat_timeout_s), options.target_workers),
      ledger_(TaskCuts(options.records.training, options.records.training_files,
                       options.minibatch_size * options.num_minibatches_per_task),
              options.records.training > 0 ? options.num_epochs : 0),
      evaluation_(options.evaluation_steps, options.records.validation > 0, options.make_metrics),
      predictions_(options.records.prediction, options.store_predictions) {
  std::lock_guard<std::mutex> lock(mu_);
  started_ns_ = clock_.NowNanos();
  ring_started_ = options.ring_start_members <= 0;
  // An evaluation-only job: one round over the validation data.
  if (options.records.training == 0) evaluation_.OnTrainingEnd(0, 0);
  AfterChangeLocked();
}

void MasterCore::FailLocked(const std::string& reason) {
  if (state_ != JobState::kRunning) return;
  state_ = JobState::kFailed;
  failure_ = reason;
  if (!replaying_) EDL_LOG(ERROR) << "job " << options_.job_name << " failed: " << reason;
  // Replayed as a FailEnding: it ends a running or succeeded job alike.
  LogLocked(EncodeFail(reason));
  finished_.notify_all();
}

void MasterCore::AfterChangeLocked() {
  if (state_ != JobState::kRunning) return;
  if (dispatcher_.failed()) {
    FailLocked(dispatcher_.failure());
    return;
  }
  while (std::optional<EvaluationAggregator::DueRound> due = evaluation_.TakeRoundToStart()) {
    const int64_t n = dispatcher_.CreateEvaluationRound(due->version);
    EDL_CHECK_GT(n, 0) << "evaluation without validation data";
    Status s = evaluation_.StartRound(due->version, due->epoch, n);
    if (!s.ok()) {
      FailLocked(s.message());
      return;
    }
    if (!replaying_) {
      EDL_LOG(INFO) << "evaluation at version " << due->version << ": " << n << " tasks queued";
    }
  }
  if (dispatcher_.AllDone() && !evaluation_.busy() && end_holds_.empty()) {
    state_ = JobState::kSucceeded;
    if (!replaying_) EDL_LOG(INFO) << "job " << options_.job_name << " succeeded";
    finished_.notify_all();
  }
}

void MasterCore::ReclaimLocked(const WorkerInfo& w, const std::string& why,
                               const std::string& how) {
  LeaveRingLocked(w.name, w.id, why);
  if (!replaying_ && state_ == JobState::kRunning && !w.stopping) {
    int64_t tasks = 0, records = 0;
    for (const protocol::Task& t : dispatcher_.LeasesOf(w.id)) {
      ++tasks;
      records += t.end - t.begin;
    }
    incidents_.OnLost(w.name, how.empty() ? why : why + ": " + how, w.last_seen_nanos,
                      clock_.NowNanos(), WallNanos(), tasks, records);
  }
  const int n =
      dispatcher_.Reclaim(w.id, w.stopping ? ReclaimReason::kHandedBack : ReclaimReason::kLost);
  if (replaying_) {
    // Logged when it happened.
  } else if (state_ == JobState::kRunning && (n > 0 || !w.stopping)) {
    EDL_LOG(WARNING) << "worker " << WorkerName(w) << " " << why << "; " << n
                     << " task(s) put back";
  } else {
    EDL_LOG(INFO) << "worker " << WorkerName(w) << " " << why;
  }
}

Result<RegisterWorkerResponse> MasterCore::RegisterWorker(const RegisterWorkerRequest& r) {
  if (r.name.empty()) return InvalidArgument("RegisterWorker: name is empty");
  ChangeLock lock(*this);
  LogLocked(EncodeRegister(r.name, r.pid, r.num_threads));
  Membership::Registration reg = RegisterLocked(r.name, r.pid, r.num_threads, clock_.NowNanos());
  RegisterWorkerResponse response;
  response.worker_id = reg.worker.id;
  return response;
}

Membership::Registration MasterCore::RegisterLocked(const std::string& name, int64_t pid,
                                                    int num_threads, int64_t now) {
  Membership::Registration reg = membership_.Register(name, pid, now, num_threads);
  if (reg.replaced) ReclaimLocked(*reg.replaced, "was replaced by a new process");
  if (!replaying_) incidents_.OnRegistered(name, now);
  if (!replaying_) {
    EDL_LOG(INFO) << "worker " << WorkerName(reg.worker) << " registered (pid " << pid << ", "
                  << num_threads << (num_threads == 1 ? " thread)" : " threads)")
                  << (reg.worker.stopping ? "; beyond the target, asked to leave" : "");
  }
  AfterChangeLocked();
  return reg;
}

Result<HeartbeatResponse> MasterCore::Heartbeat(const HeartbeatRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  const Standing standing = membership_.Touch(r.worker_id, clock_.NowNanos());
  if (standing == Standing::kUnknown) return NeverRegistered(r.worker_id);
  HeartbeatResponse response;
  // Ring members of a finished job are not stopped: they learn the end from
  // GetTask (kDone) together, in one step, and rank 0 exports the model.
  bool finishing_ring = false;
  if (state_ == JobState::kSucceeded) {
    for (const auto& [name, id] : ring_ids_) finishing_ring = finishing_ring || id == r.worker_id;
  }
  response.stop = standing != Standing::kAlive || (state_ != JobState::kRunning && !finishing_ring);
  return response;
}

Result<protocol::Task> MasterCore::GetTask(const GetTaskRequest& r) {
  ChangeLock lock(*this);
  const int64_t now = clock_.NowNanos();
  const Standing standing = membership_.Touch(r.worker_id, now);
  if (standing == Standing::kUnknown) return NeverRegistered(r.worker_id);
  if (standing != Standing::kAlive || state_ != JobState::kRunning) {
    protocol::Task done;
    done.type = TaskType::kDone;
    return done;
  }
  if (!ring_started_) {
    const size_t members = ring_ids_.size();
    const bool waited_out = now - started_ns_ >= Nanos(options_.ring_start_timeout_s);
    if (members < static_cast<size_t>(options_.ring_start_members) && !waited_out) {
      return protocol::Task{};  // kWait
    }
    ring_started_ = true;
    EDL_LOG(INFO) << "the ring starts with " << members << " member(s)"
                  << (waited_out ? " (stopped waiting for " +
                                       std::to_string(options_.ring_start_members) + ")"
                                 : "");
  }
  WorkerInfo* w = membership_.Find(r.worker_id);
  if (r.request != 0 && w->last_get_request == r.request) {
    // A retry whose first answer was lost: the same task, if still held.
    if (auto held = dispatcher_.LeasedTo(r.worker_id, w->last_get_task)) return *held;
  }
  protocol::Task task = LeaseLocked(r.worker_id, r.request, now);
  if (task.type != TaskType::kWait && task.type != TaskType::kDone) {
    LogLocked(EncodeLease(r.worker_id, r.request, task.id));
  }
  // Redos may still come: the worker waits instead of leaving.
  if (task.type == TaskType::kDone && !end_holds_.empty()) task.type = TaskType::kWait;
  return task;
}

protocol::Task MasterCore::LeaseLocked(int64_t worker_id, int64_t request, int64_t now) {
  protocol::Task task = dispatcher_.GetTask(worker_id, now);
  if (task.type == TaskType::kWait || task.type == TaskType::kDone) return task;
  ring_started_ = true;
  if (WorkerInfo* w = membership_.Find(worker_id)) {
    w->last_get_request = request;
    w->last_get_task = task.id;
    if (task.type == TaskType::kTraining && !replaying_) incidents_.OnTrainingTask(w->name, now);
  }
  if (task.type == TaskType::kTraining && training_started_nanos_ < 0 && !replaying_) {
    training_started_nanos_ = now;
    training_started_wall_ = WallNanos();
    LogLocked(EncodeTrainingStarted(training_started_wall_));
  }
  if (!replaying_ && first_dispatch_pending_) {
    first_dispatch_pending_ = false;
    EDL_LOG(INFO) << "dispatching again: the first task since this master recovered the job";
  }
  return task;
}

void MasterCore::HandleEvaluationLocked(const ReportTaskRequest& r) {
  Result<std::optional<EvaluationRecord>> record = evaluation_.AddReport(r);
  if (!record.ok()) {
    FailLocked(record.status().message());
    return;
  }
  if (record.value() && !replaying_) EDL_LOG(INFO) << record.value()->ToString();
}

Result<ReportTaskResponse> MasterCore::ReportTask(const ReportTaskRequest& r) {
  ChangeLock lock(*this);
  const Standing standing = membership_.Touch(r.worker_id, clock_.NowNanos());
  if (standing == Standing::kUnknown) return NeverRegistered(r.worker_id);
  if (state_ != JobState::kRunning) return ReportTaskResponse{};
  if (r.task_id != 0 && membership_.LastReport(r.worker_id) == r.task_id &&
      !dispatcher_.LeasedTo(r.worker_id, r.task_id)) {
    return ReportTaskResponse{};  // a retry of a report already applied
  }
  // Applied first: a prediction's part is on disk before the report that
  // says it arrived can be.
  ReportTaskResponse response;
  response.counted = ReportLocked(r, standing);
  LogLocked(EncodeReport(r));
  return response;
}

bool MasterCore::ReportLocked(const ReportTaskRequest& r, Standing standing) {
  membership_.SetLastReport(r.worker_id, r.task_id);
  const TaskResult result = r.ok                              ? TaskResult::kSucceeded
                            : standing == Standing::kStopping ? TaskResult::kHandedBack
                                                              : TaskResult::kFailed;
  const ReportOutcome outcome = dispatcher_.ReportTask(r.worker_id, r.task_id, result, r.error);
  if (!outcome.task) {
    if (!replaying_) {
      EDL_LOG(WARNING) << "worker id " << r.worker_id << " reported task id " << r.task_id
                       << ", which this master never issued";
    }
    return false;
  }
  const protocol::Task& task = *outcome.task;
  if (r.ok) {
    if (WorkerInfo* w = membership_.Find(r.worker_id)) ++w->tasks_done;
  }
  if (task.type == TaskType::kTraining) {
    model_version_ = std::max(model_version_, r.model_version);
    // A late report still trained its records (its gradients were applied);
    // a redo trained them again only for a PS that had lost them.
    if (r.ok && outcome.redo) {
      ledger_.RecordRedone(task.epoch, task.begin, task.end);
    } else if (r.ok) {
      ledger_.RecordTrained(task.epoch, task.begin, task.end);
    }
    if (r.ok && !replaying_) {
      train_loss_sum_ += r.loss_sum;
      train_samples_ += r.samples;
    }
    evaluation_.OnModelVersion(model_version_, task.epoch);
  }
  if (outcome.accepted && result == TaskResult::kFailed && !replaying_) {
    EDL_LOG(WARNING) << TaskDispatcher::Describe(task) << " failed on worker id " << r.worker_id
                     << ": " << protocol::WithoutTaskRangeName(task, r.error);
  }
  if (r.ok && (outcome.accepted || task.type == TaskType::kTraining)) {
    records_skipped_ += r.records_skipped;
  }
  if (outcome.accepted && r.ok) {
    if (task.type == TaskType::kEvaluation) {
      HandleEvaluationLocked(r);
    } else if (task.type == TaskType::kPrediction && replaying_) {
      predictions_.MarkReceived(task.begin, task.end, r.predictions);  // the sink kept them
    } else if (task.type == TaskType::kPrediction) {
      Status s = predictions_.Add(task.begin, task.end, r.predictions);
      if (!s.ok()) FailLocked(s.message());
    }
  }
  if (outcome.epoch_completed && !replaying_) {
    EDL_LOG(INFO) << "epoch " << *outcome.epoch_completed << " trained (model version "
                  << model_version_ << ")";
    epoch_ends_.push_back({*outcome.epoch_completed, clock_.NowSeconds(), ProgressLocked()});
  }
  if (outcome.training_completed) {
    training_ended_nanos_ = clock_.NowNanos();
    if (!replaying_) {
      training_ended_wall_ = WallNanos();
      LogLocked(EncodeTrainingEnded(training_ended_wall_));
    }
    evaluation_.OnTrainingEnd(model_version_, outcome.epoch_completed.value_or(task.epoch));
  } else if (outcome.epoch_completed) {
    evaluation_.OnEpochEnd(*outcome.epoch_completed, model_version_);
  }
  AfterChangeLocked();
  return outcome.accepted;
}

void MasterCore::Tick() {
  ChangeLock lock(*this);
  const int64_t now = clock_.NowNanos();
  std::vector<int64_t> dead;
  for (const WorkerInfo& w : membership_.Tick(now)) {
    char why[96];
    std::snprintf(why, sizeof why, "missed heartbeats for %.1f s: declared dead",
                  static_cast<double>(now - w.last_seen_nanos) * 1e-9);
    ReclaimLocked(w, why);
    dead.push_back(w.id);
  }
  std::vector<int64_t> expired;
  if (dispatcher_.Tick(now, &expired) > 0) {
    EDL_LOG(WARNING) << expired.size() << " task lease(s) expired after "
                     << options_.lease_timeout_s << " s; put back";
  }
  AfterChangeLocked();
  if (!dead.empty() || !expired.empty()) LogLocked(EncodeTick(dead, expired));
}

void MasterCore::OnWorkerExit(const std::string& name, const std::string& how) {
  ChangeLock lock(*this);
  ExitLocked(name, how);
}

void MasterCore::OnReplacementRequested(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  incidents_.OnReplacementRequested(name, clock_.NowNanos());
}

std::vector<std::string> MasterCore::AwaitingReplacement() const {
  std::lock_guard<std::mutex> lock(mu_);
  return incidents_.AwaitingReplacement();
}

void MasterCore::OnPendingReason(const std::string& name, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  incidents_.OnPendingReason(name, reason);
}

void MasterCore::ExitLocked(const std::string& name, const std::string& how) {
  LogLocked(EncodeName(Event::kExit, name));
  if (std::optional<WorkerInfo> w = membership_.OnExit(name)) {
    ReclaimLocked(*w, "exited", how);
    AfterChangeLocked();
  }
}

void MasterCore::SetTargetWorkers(int n) {
  ChangeLock lock(*this);
  SetTargetLocked(n);
}

void MasterCore::SetTargetLocked(int n) {
  LogLocked(EncodeTarget(n));
  if (!replaying_ && n != membership_.target()) {
    EDL_LOG(INFO) << "scaling from " << membership_.target() << " to " << n << " workers";
  }
  membership_.set_target(n);
}

bool MasterCore::RequestStop(const std::string& name) {
  ChangeLock lock(*this);
  return RequestStopLocked(name);
}

bool MasterCore::RequestStopLocked(const std::string& name) {
  LogLocked(EncodeName(Event::kStop, name));
  if (!membership_.RequestStop(name)) return false;
  if (auto it = ring_ids_.find(name); it != ring_ids_.end()) {
    LeaveRingLocked(name, it->second, "was asked to leave");
  }
  return true;
}

void MasterCore::Fail(const std::string& reason) {
  ChangeLock lock(*this);
  FailLocked(reason);
}

void MasterCore::FailEnding(const std::string& reason) {
  ChangeLock lock(*this);
  if (state_ == JobState::kSucceeded) state_ = JobState::kRunning;
  FailLocked(reason);
}

bool MasterCore::WaitUntilFinished(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return finished_.wait_for(lock, timeout, [&] { return state_ != JobState::kRunning; });
}

}  // namespace edl::roles::master
