// MasterCore's durable state: journaling each change, snapshots, and
// recovery by replay. See roles/master/master_core.h and docs/distributed.md,
// 'A master that survives its own death'.
#include <algorithm>

#include "base/logging.h"
#include "roles/master/master_core.h"
#include "roles/master/master_events.h"
#include "roles/protocol/wire.h"

namespace edl::roles::master {

namespace {

constexpr uint8_t kSnapshotVersion = 3;

std::string Join(const std::vector<int64_t>& v) {
  std::string out;
  for (int64_t n : v) out += (out.empty() ? "" : ",") + std::to_string(n);
  return out;
}

}  // namespace

std::string MasterCore::JobShape() const {
  const MasterOptions& o = options_;
  const DatasetSizes& r = o.records;
  return "job " + o.job_name + "; training records " + std::to_string(r.training) + " [" +
         Join(r.training_files) + "]; validation records " + std::to_string(r.validation) + " [" +
         Join(r.validation_files) + "]; prediction records " + std::to_string(r.prediction) + " [" +
         Join(r.prediction_files) + "]; records per task " +
         std::to_string(o.minibatch_size * o.num_minibatches_per_task) + "; epochs " +
         std::to_string(o.num_epochs) + "; seed " + std::to_string(o.seed) + "; shuffle " +
         (o.shuffle ? "true" : "false") + "; evaluation steps " +
         std::to_string(o.evaluation_steps);
}

namespace {

// "the state belongs to another job: epochs 2 there, 3 here".
Status OtherJob(const std::string& dir, const std::string& there, const std::string& here) {
  // Name the first part that differs.
  size_t start = 0;
  while (start < std::min(there.size(), here.size()) && there[start] == here[start]) ++start;
  start = there.rfind("; ", start) == std::string::npos ? 0 : there.rfind("; ", start) + 2;
  auto part = [&](const std::string& s) {
    const size_t end = s.find("; ", start);
    return s.substr(start, end == std::string::npos ? std::string::npos : end - start);
  };
  return FailedPrecondition(dir + " holds the state of another job (" + part(there) + " there, " +
                            part(here) +
                            " here): a restarted master must be given the job's own "
                            "flags and data; use a new job name or remove the directory");
}

}  // namespace

Status MasterCore::OpenState() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& dir = options_.state_dir;
  Journal::Recovered recovered;
  EDL_ASSIGN_OR_RETURN(journal_, Journal::Open(dir, options_.durable_state, &recovered));
  if (options_.after_state_write) journal_->SetOnWrite(options_.after_state_write);
  const bool fresh = !recovered.has_snapshot && recovered.records.empty();
  if (fresh) {
    LogLocked(EncodeJob(JobShape()));
    return journal_error_;
  }
  replaying_ = true;
  Status s;
  if (recovered.has_snapshot) {
    s = LoadLocked(recovered.snapshot);
    if (!s.ok()) s = s.WithPrefix(dir + "/snapshot");
  }
  const uint64_t first = journal_->next_seq() - recovered.records.size();
  for (size_t i = 0; i < recovered.records.size() && s.ok(); ++i) {
    s = ReplayLocked(recovered.records[i], first + i);
  }
  replaying_ = false;
  if (!s.ok()) {
    journal_.reset();
    return s;
  }
  ++restarts_;
  LogLocked(EncodeRecovered());
  // Every known worker was seen just now; every lease runs from now.
  const int64_t now = clock_.NowNanos();
  for (const auto& [id, w] : membership_.alive()) membership_.Touch(id, now);
  started_ns_ = now;
  first_dispatch_pending_ = true;
  // The training's start and end, from wall-clock times to this clock.
  const int64_t wall = WallNanos();
  training_started_nanos_ = training_started_wall_ > 0 ? now - (wall - training_started_wall_) : -1;
  training_ended_nanos_ = training_ended_wall_ > 0 ? now - (wall - training_ended_wall_) : -1;
  EDL_LOG(INFO) << "master of job " << options_.job_name << " recovered its state from " << dir
                << " (restart " << restarts_
                << "): " << (recovered.has_snapshot ? "a snapshot and " : "")
                << recovered.records.size() << " journal records"
                << (recovered.torn_bytes > 0 ? ", " + std::to_string(recovered.torn_bytes) +
                                                   " bytes of a record cut short dropped"
                                             : std::string())
                << "; epoch " << dispatcher_.current_epoch() << ", model version " << model_version_
                << ", " << membership_.alive().size() << " worker(s) known, "
                << dispatcher_.Counts(TaskType::kTraining).doing << " training task(s) leased";
  // A snapshot now, so the next recovery starts from here.
  const std::string state = SaveLocked();
  if (Status snap = journal_->Snapshot(state); !snap.ok()) {
    journal_error_ = snap;
    return snap;
  }
  snapshot_bytes_ = state.size();
  return journal_error_;
}

void MasterCore::LogLocked(const std::string& record) {
  if (!journal_ || replaying_ || !journal_error_.ok()) return;
  Result<uint64_t> seq = journal_->Append(record);
  if (!seq.ok()) {
    journal_error_ = seq.status();
    EDL_LOG(ERROR) << "the master's journal failed: " << journal_error_.message();
    return;
  }
}

void MasterCore::CompactLocked() {
  if (!journal_ || !journal_error_.ok()) return;
  const uint64_t bytes = journal_->journal_bytes();
  if (bytes < options_.snapshot_min_bytes || bytes < snapshot_bytes_) return;
  const std::string state = SaveLocked();
  if (Status s = journal_->Snapshot(state); !s.ok()) {
    journal_error_ = s;
    EDL_LOG(ERROR) << "the master's snapshot failed: " << s.message();
    return;
  }
  snapshot_bytes_ = state.size();
}

Status MasterCore::ReplayLocked(std::string_view record, uint64_t seq) {
  const std::string where = options_.state_dir + ": journal record " + std::to_string(seq) + ": ";
  Result<MasterEvent> decoded = DecodeEvent(record);
  if (!decoded.ok()) return decoded.status().WithPrefix(where);
  const MasterEvent& e = *decoded;
  const int64_t now = clock_.NowNanos();
  switch (e.kind) {
    case Event::kJob:
      if (e.text != JobShape()) return OtherJob(options_.state_dir, e.text, JobShape());
      break;
    case Event::kRecovered: ++restarts_; break;
    case Event::kRegister: RegisterLocked(e.text, e.pid, e.num_threads, now); break;
    case Event::kLease: {
      if (membership_.StandingOf(e.worker_id) == Standing::kUnknown) {
        return InvalidArgument(where + "a lease to worker id " + std::to_string(e.worker_id) +
                               ", never registered");
      }
      const protocol::Task task = LeaseLocked(e.worker_id, e.request, now);
      if (task.id != e.task_id) {
        return Internal(where + "replaying a lease gave task id " + std::to_string(task.id) +
                        " where the journal says " + std::to_string(e.task_id) +
                        " (the journal does not match this job)");
      }
      break;
    }
    case Event::kReport: {
      const Standing standing = membership_.StandingOf(e.report.worker_id);
      if (standing == Standing::kUnknown) {
        return InvalidArgument(where + "a report of worker id " +
                               std::to_string(e.report.worker_id) + ", never registered");
      }
      ReportLocked(e.report, standing);
      break;
    }
    case Event::kTick:
      for (int64_t id : e.dead) {
        if (std::optional<WorkerInfo> w = membership_.DeclareDead(id)) {
          ReclaimLocked(*w, "declared dead");
        }
      }
      for (int64_t id : e.expired) dispatcher_.Expire(id);
      AfterChangeLocked();
      break;
    case Event::kExit: ExitLocked(e.text); break;
    case Event::kTarget: SetTargetLocked(static_cast<int>(e.number)); break;
    case Event::kStop: RequestStopLocked(e.text); break;
    case Event::kFail:
      if (state_ == JobState::kSucceeded) state_ = JobState::kRunning;
      FailLocked(e.text);
      break;
    case Event::kJoinRing:
      if (membership_.StandingOf(e.worker_id) != Standing::kAlive) {
        return InvalidArgument(where + "a ring join of worker id " + std::to_string(e.worker_id) +
                               ", not alive");
      }
      JoinRingLocked(e.worker_id, e.text);
      break;
    case Event::kRingSynced: ring_.MarkSynced(static_cast<uint64_t>(e.number)); break;
    case Event::kTrainingStarted: training_started_wall_ = e.number; break;
    case Event::kTrainingEnded: training_ended_wall_ = e.number; break;
    case Event::kRedo: RedoLocked(e.expired); break;
  }
  return Status::Ok();
}

std::string MasterCore::SaveLocked() const {
  protocol::Writer w;
  w.U8(kSnapshotVersion);
  w.String(JobShape());
  w.I64(restarts_);
  w.U8(static_cast<uint8_t>(state_));
  w.String(failure_);
  w.I64(model_version_);
  w.I64(records_skipped_);
  w.Bool(ring_started_);
  w.I64(training_started_wall_);
  w.I64(training_ended_wall_);
  w.Varint(ring_ids_.size());
  for (const auto& [name, id] : ring_ids_) {
    w.String(name);
    w.I64(id);
  }
  membership_.Save(w);
  dispatcher_.Save(w);
  ledger_.Save(w);
  evaluation_.Save(w);
  predictions_.Save(w);
  ring_.Save(w);
  return std::move(w).Take();
}

Status MasterCore::LoadLocked(std::string_view snapshot) {
  protocol::Reader r(snapshot, "snapshot");
  const uint8_t version = r.U8("version");
  if (r.ok() && version != kSnapshotVersion) {
    return InvalidArgument("snapshot version " + std::to_string(version) + ", this edl reads " +
                           std::to_string(kSnapshotVersion));
  }
  const std::string shape = r.String("job");
  if (r.ok() && shape != JobShape()) return OtherJob(options_.state_dir, shape, JobShape());
  const int64_t now = clock_.NowNanos();
  restarts_ = r.I64("restarts");
  const uint8_t state = r.U8("state");
  if (r.ok() && state > static_cast<uint8_t>(JobState::kFailed)) r.Fail("bad job state");
  state_ = static_cast<JobState>(state);
  failure_ = r.String("failure");
  model_version_ = r.I64("model_version");
  records_skipped_ = r.I64("records_skipped");
  ring_started_ = r.Bool("ring_started");
  training_started_wall_ = r.I64("training_started");
  training_ended_wall_ = r.I64("training_ended");
  ring_ids_.clear();
  const size_t n = r.Count("ring_ids", 9);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    std::string name = r.String("name");
    ring_ids_[name] = r.I64("id");
  }
  membership_.Load(r, now);
  dispatcher_.Load(r, now);
  ledger_.Load(r);
  evaluation_.Load(r);
  predictions_.Load(r);
  ring_.Load(r);
  return r.Finish();
}

void MasterCore::WhenDurable(std::function<void(Status)> done) const {
  Journal* journal = nullptr;
  Status error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    journal = journal_.get();
    error = journal_error_;
  }
  if (journal == nullptr || !error.ok()) {
    done(error);
    return;
  }
  journal->WhenDurable(journal->next_seq(), std::move(done));
}

Status MasterCore::durability() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!journal_error_.ok() || !journal_) return journal_error_;
  return journal_->error();
}

int64_t MasterCore::restarts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restarts_;
}

Journal::Stats MasterCore::journal_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return journal_ ? journal_->stats() : Journal::Stats{};
}

}  // namespace edl::roles::master
