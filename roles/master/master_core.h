// MasterCore: the master's logic (docs/distributed.md) as one MasterService: task
// dispatch with leases, membership and death detection, the data ledger,
// evaluation rounds and prediction gathering, the job's outcome, and its
// status as JSON, Prometheus text and a final report. No networking: the
// RPC server calls the MasterService methods; the process wiring calls
// Tick() periodically (e.g. every 100 ms), OnWorkerExit() when the cluster
// sees a worker process end, and waits for the job with WaitUntilFinished().
//
// Workers' view: RegisterWorker once per process, then GetTask / ReportTask
// and a Heartbeat every ~0.5 s (any call counts as one). GetTask answers
// kDone, and Heartbeat stop=true, to a worker asked to leave or declared
// dead; such a worker should hand back its task (ReportTask ok=false: not
// counted as a failure for a worker asked to leave) and exit. Calls with a
// worker id never issued fail with FailedPrecondition.
//
// The allreduce ring (docs/allreduce.md): a live worker JoinRings with its
// ring listener's address, polls GetRingView at step boundaries and, after
// taking the source's state, reports RingSynced. A worker the membership loses
// (declared dead, exited, replaced by a new process, asked to leave) leaves
// the ring at once, which bumps the ring's version.
//
// Durable (MasterOptions::state_dir; docs/distributed.md, 'A master that
// survives its own death'): every change is journaled under the lock, as it
// happens (worker registered, task leased, report applied, workers declared
// dead and leases expired on Tick, exits, scale, ring joins, failure), and
// compacted into a snapshot when the journal has grown. Create() on a
// directory holding state loads the snapshot and replays the journal through
// the same code (a lease replayed must hand out the task it did, or recovery
// stops), so the new master has the old one's epoch, queues, leases, ledger,
// evaluation round and ring; the workers it knew count as just seen and get
// a heartbeat timeout to call again (with the ids they have), their leases
// the lease timeout. Replies must wait for WhenDurable, so that no worker
// acts on a change a restart could forget. Retried calls are idempotent: a
// GetTask repeating its request number gets the task it was given; a
// ReportTask of the task a worker reported last (and does not hold again)
// changes nothing.
//
// Thread-safe: one mutex guards all state. GetTask, ReportTask and
// Heartbeat cost O(log n) in the tasks in flight and the workers (no scan
// over tasks); Tick and the status reports are O(workers + tasks shown).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "roles/master/data_ledger.h"
#include "roles/master/evaluation_aggregator.h"
#include "roles/master/incident_log.h"
#include "roles/master/journal.h"
#include "roles/master/master_options.h"
#include "roles/master/membership.h"
#include "roles/master/prediction_collector.h"
#include "roles/master/progress.h"
#include "roles/master/rendezvous.h"
#include "roles/master/task_dispatcher.h"
#include "roles/protocol/services.h"

namespace edl::roles::master {

enum class JobState { kRunning, kSucceeded, kFailed };

const char* JobStateName(JobState state);  // "running", ...

// Nanoseconds since the epoch by the wall clock.
int64_t WallNanos();
// FailedPrecondition for a call from a worker id this master never issued.
Status NeverRegistered(int64_t id);

class MasterCore final : public protocol::MasterService {
 public:
  // InvalidArgument for bad options (ValidateMasterOptions). `clock` must
  // outlive the core. With options.state_dir: the journal's errors
  // (IoError naming file and offset), or FailedPrecondition when the state
  // there belongs to another job (naming what differs).
  static Result<std::unique_ptr<MasterCore>> Create(const MasterOptions& options,
                                                    const Clock& clock);

  // Calls `done` once every change made so far is durable (at once without
  // a state_dir), with the journal's error if it cannot be written: an RPC
  // reply goes out only then.
  void WhenDurable(std::function<void(Status)> done) const;
  // The journal's first error (the master must stop: it can no longer keep
  // its promises); OK without a state_dir.
  Status durability() const;
  // How this master started: 0 for a new job, n after its n-th recovery.
  int64_t restarts() const;
  Journal::Stats journal_stats() const;

  Result<protocol::RegisterWorkerResponse> RegisterWorker(
      const protocol::RegisterWorkerRequest& r) override;
  Result<protocol::HeartbeatResponse> Heartbeat(const protocol::HeartbeatRequest& r) override;
  Result<protocol::Task> GetTask(const protocol::GetTaskRequest& r) override;
  Result<protocol::ReportTaskResponse> ReportTask(const protocol::ReportTaskRequest& r) override;
  // FailedPrecondition for a worker id never issued, declared dead, or
  // asked to leave.
  Result<protocol::RingView> JoinRing(const protocol::JoinRingRequest& r) override;
  // The full current view (whatever known_version says); FailedPrecondition
  // for a worker id never issued.
  Result<protocol::RingView> GetRingView(const protocol::RingViewRequest& r) override;
  // Rendezvous::MarkSynced; FailedPrecondition for a worker id never issued.
  Result<protocol::RingSyncedResponse> RingSynced(const protocol::RingSyncedRequest& r) override;

  // Declares silent workers dead and reclaims their tasks; expires leases.
  void Tick();
  // The cluster saw the process `name` end: its tasks go back at once.
  // `how` ("worker-1 (incarnation 2) killed by signal 9") is the incident's
  // cause (roles/master/incident_log.h).
  void OnWorkerExit(const std::string& name, const std::string& how = "");
  // The process owner launched (or is about to launch) a new process under
  // a lost worker's name: the incident's replacement request.
  void OnReplacementRequested(const std::string& name);
  // The lost workers whose replacement has not registered, and why one
  // waits (a pod's scheduling failure), for the incident timeline.
  std::vector<std::string> AwaitingReplacement() const;
  void OnPendingReason(const std::string& name, const std::string& reason);
  // Scale: the workers wanted (durable). Registrations beyond it are asked
  // to leave; whom to stop of those running is the process owner's choice
  // (RequestStop), who reads target_workers().
  void SetTargetWorkers(int n);
  // Asks one worker to leave; false if no live worker has that name.
  bool RequestStop(const std::string& name);
  // Ends the job as failed (e.g. a PS cannot be relaunched); the first
  // reason wins. Workers get kDone from then on.
  void Fail(const std::string& reason);
  // Fails a job whose training succeeded but whose ending did not (the
  // final checkpoint or export): the report and exit then say failed.
  void FailEnding(const std::string& reason);

  // A PS came back from a checkpoint (or from nothing) holding, of the
  // training tasks, only the `settled` id ranges ([first, last]) and the
  // minibatch counts `taken` of others (roles/ps/applied_pushes.h): every
  // done training task it does not hold whole is queued again as a redo
  // (journaled; the ledger counts it as redone), so that its updates reach
  // that PS once, while the other PS refuse its pushes as taken
  // (docs/distributed.md, 'A PS loss'). Returns the tasks queued.
  int64_t RedoLostTasks(const std::string& ps,
                        const std::vector<std::pair<int64_t, int64_t>>& settled,
                        const std::vector<std::pair<int64_t, int64_t>>& taken);
  // What a PS says of its periodic checkpoints (roles/job/ps_process.h,
  // kPsCheckpointHealthPath): `failures` attempts failed since its
  // `last_good_version` (-1: none), the last at `failed_version`. A failure
  // opens (or extends) a checkpoint incident; a good version after it
  // closes it. The job fails, naming the PS, the versions and the error,
  // once failed_version is options.max_failed_checkpoint_intervals
  // intervals past the last good version (or the start).
  void OnCheckpointHealth(const std::string& ps, int64_t last_good_version, int64_t failures,
                          int64_t failed_version, const std::string& error);
  // The incident timeline, for a new master (IncidentLog::ToSaved/Restore);
  // Restore answers false for text that is not a saved log.
  std::string SavedIncidents() const;
  bool RestoreIncidents(const std::string& saved);

  // While `who` holds it (a PS being checked for lost updates), the job
  // does not succeed and workers out of tasks wait instead of leaving,
  // for redos that may come. Not durable: a new master checks again.
  void HoldEnd(const std::string& who, bool hold);
  // The training tasks leased now, ascending ids.
  std::vector<int64_t> TrainingTasksInFlight() const;

  JobState state() const;
  std::string failure_reason() const;  // "" unless failed
  // Waits (real time) until the job is no longer running; false on timeout.
  bool WaitUntilFinished(std::chrono::milliseconds timeout);

  int64_t model_version() const;
  Progress progress() const;
  // The training epochs that ended while this master ran, in order (not
  // kept across a restart, like Progress's loss sums).
  std::vector<EpochEnd> epoch_ends() const;
  int target_workers() const;
  std::vector<WorkerInfo> workers() const;
  std::vector<EvaluationRecord> evaluation_history() const;
  std::vector<EpochLedger> ledger() const;
  // OK once every prediction record's outputs went to
  // MasterOptions::store_predictions; FailedPrecondition before.
  Status PredictionsComplete() const;

  // {"job":..., "master_restarts":..., "state":..., "reason":..., "epoch":...,
  //  "num_epochs":...,
  //  "model_version":..., "workers":[{"id","name","pid","last_heartbeat_age_s",
  //  "stopping","tasks":[{"id","type","begin","end","epoch"}]}],
  //  "workers_target":..., "workers_registered":..., "workers_lost":...,
  //  "tasks":{"training":{"todo","doing","done"},"evaluation":{...},
  //  "prediction":{...}}, "evaluations":[{"model_version","epoch","final",
  //  "samples","loss","metrics":{name:value}}] (at most 500, evenly spaced
  //  from the first to the last), "evaluations_total":..., "ledger":[DataLedger JSON],
  //  "incidents":[IncidentLog::ToJson()],
  //  "checkpoint_incidents":[IncidentLog::CheckpointsToJson()],
  //  "ring":{"version","size","source_rank","members":[{"id","name",
  //  "address"}]}}; "ring" only once a worker has joined it.
  std::string StatusJson() const;
  // Prometheus text exposition format 0.0.4: edl_tasks{state,type},
  // edl_model_version, edl_epoch, edl_workers_alive, edl_workers_lost_total,
  // edl_records_trained_total, edl_evaluation_metric{name} (loss included),
  // edl_evaluation_model_version, edl_job_state{state} (1 for the current),
  // edl_master_restarts_total.
  std::string PrometheusText() const;
  // The end-of-job summary: outcome, the ledger, the last evaluation.
  std::string FinalReport() const;

  // REQUIRES: valid options (Create checks them).
  MasterCore(const MasterOptions& options, const Clock& clock);

 private:
  // Holds mu_ for a call that may change the state; on release, writes a
  // snapshot if the journal has grown enough (never mid-change: a change
  // is journaled before it is applied).
  class ChangeLock {
   public:
    explicit ChangeLock(MasterCore& core) : core_(core), lock_(core.mu_) {}
    ~ChangeLock() { core_.CompactLocked(); }
    ChangeLock(const ChangeLock&) = delete;
    ChangeLock& operator=(const ChangeLock&) = delete;

   private:
    MasterCore& core_;
    std::lock_guard<std::mutex> lock_;
  };

  // The journal (roles/master/master_core_journal.cc).
  Status OpenState();
  // Appends one change to the journal (nothing while replaying or without
  // a state_dir).
  void LogLocked(const std::string& record);
  // Snapshots when the journal has grown enough.
  void CompactLocked();
  Status ReplayLocked(std::string_view record, uint64_t seq);
  std::string SaveLocked() const;
  Status LoadLocked(std::string_view snapshot);
  // The job the state belongs to, to refuse another job's state.
  std::string JobShape() const;

  // The changes, shared by the live calls and the replay.
  Membership::Registration RegisterLocked(const std::string& name, int64_t pid, int num_threads,
                                          int64_t now);
  protocol::Task LeaseLocked(int64_t worker_id, int64_t request, int64_t now);
  // Returns whether the report ended the worker's lease (ReportTaskResponse::counted).
  bool ReportLocked(const protocol::ReportTaskRequest& r, Standing standing);
  void ExitLocked(const std::string& name, const std::string& how = "");
  void SetTargetLocked(int n);
  bool RequestStopLocked(const std::string& name);
  void JoinRingLocked(int64_t worker_id, const std::string& address);
  // Queues the tasks as redos; returns how many and their records.
  std::pair<int64_t, int64_t> RedoLocked(const std::vector<int64_t>& task_ids);

  void FailLocked(const std::string& reason);
  // `why` goes to the log line; `how` (the cluster's words) is added to
  // the incident's cause.
  void ReclaimLocked(const WorkerInfo& worker, const std::string& why, const std::string& how = "");
  void AfterChangeLocked();
  void HandleEvaluationLocked(const protocol::ReportTaskRequest& r);
  // Removes the incarnation `id` of `name` from the ring if it is a member.
  void LeaveRingLocked(const std::string& name, int64_t id, const std::string& why);
  protocol::RingView RingViewLocked() const;
  Progress ProgressLocked() const;

  const MasterOptions options_;
  const Clock& clock_;

  mutable std::mutex mu_;
  std::condition_variable finished_;
  // Guarded by mu_:
  TaskDispatcher dispatcher_;
  Membership membership_;
  DataLedger ledger_;
  EvaluationAggregator evaluation_;
  PredictionCollector predictions_;
  int64_t records_skipped_ = 0;      // corrupt records workers left out
  std::set<std::string> end_holds_;  // HoldEnd
  IncidentLog incidents_;            // not journaled (incident_log.h)
  double train_loss_sum_ = 0;        // Progress::train_loss_sum
  int64_t train_samples_ = 0;
  std::vector<EpochEnd> epoch_ends_;  // not journaled (epoch_ends())
  // The first training task handed out, the last one reported (clock_).
  int64_t training_started_nanos_ = -1;
  int64_t training_ended_nanos_ = -1;
  JobState state_ = JobState::kRunning;
  std::string failure_;
  int64_t model_version_ = 0;
  Rendezvous ring_;
  // The incarnation of each ring member, by name.
  std::map<std::string, int64_t> ring_ids_;
  // options_.ring_start_members: when the master started, and whether the
  // ring has reached its starting size (or the wait timed out).
  int64_t started_ns_ = 0;
  bool ring_started_ = false;
  // Durable state (null without options_.state_dir).
  std::unique_ptr<Journal> journal_;
  Status journal_error_;
  bool replaying_ = false;
  uint64_t snapshot_bytes_ = 0;  // of the last snapshot
  int64_t restarts_ = 0;
  // Wall-clock nanoseconds of the training's start and end, durable: a new
  // master (on another machine, with another steady clock) turns them into
  // clock_ times (0 = not yet).
  int64_t training_started_wall_ = 0;
  int64_t training_ended_wall_ = 0;
  bool first_dispatch_pending_ = false;  // after a recovery, until a task goes out
};

}  // namespace edl::roles::master
