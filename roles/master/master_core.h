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
// The allreduce ring (issue 5): a live worker JoinRings with its ring
// listener's address, polls GetRingView at step boundaries and, after taking
// the source's state, reports RingSynced. A worker the membership loses
// (declared dead, exited, replaced by a new process, asked to leave) leaves
// the ring at once, which bumps the ring's version.
//
// Thread-safe: one mutex guards all state. GetTask, ReportTask and
// Heartbeat cost O(log n) in the tasks in flight and the workers (no scan
// over tasks); Tick and the status reports are O(workers + tasks shown).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "roles/master/data_ledger.h"
#include "roles/master/evaluation_aggregator.h"
#include "roles/master/master_options.h"
#include "roles/master/membership.h"
#include "roles/master/prediction_collector.h"
#include "roles/master/rendezvous.h"
#include "roles/master/task_dispatcher.h"
#include "roles/protocol/services.h"

namespace edl::roles::master {

enum class JobState { kRunning, kSucceeded, kFailed };
const char* JobStateName(JobState state);  // "running", ...

class MasterCore final : public protocol::MasterService {
 public:
  // InvalidArgument for bad options (ValidateMasterOptions). `clock` must
  // outlive the core.
  static Result<std::unique_ptr<MasterCore>> Create(
      const MasterOptions& options, const Clock& clock);

  Result<protocol::RegisterWorkerResponse> RegisterWorker(
      const protocol::RegisterWorkerRequest& r) override;
  Result<protocol::HeartbeatResponse> Heartbeat(
      const protocol::HeartbeatRequest& r) override;
  Result<protocol::Task> GetTask(const protocol::GetTaskRequest& r) override;
  Result<protocol::ReportTaskResponse> ReportTask(
      const protocol::ReportTaskRequest& r) override;
  // FailedPrecondition for a worker id never issued, declared dead, or
  // asked to leave.
  Result<protocol::RingView> JoinRing(
      const protocol::JoinRingRequest& r) override;
  // The full current view (whatever known_version says); FailedPrecondition
  // for a worker id never issued.
  Result<protocol::RingView> GetRingView(
      const protocol::RingViewRequest& r) override;
  // Rendezvous::MarkSynced; FailedPrecondition for a worker id never issued.
  Result<protocol::RingSyncedResponse> RingSynced(
      const protocol::RingSyncedRequest& r) override;

  // Declares silent workers dead and reclaims their tasks; expires leases.
  void Tick();
  // The cluster saw the process `name` end: its tasks go back at once.
  void OnWorkerExit(const std::string& name);
  // Scale: asks the active workers beyond n to leave; returns their names.
  std::vector<std::string> SetTargetWorkers(int n);
  // Asks one worker to leave; false if no live worker has that name.
  bool RequestStop(const std::string& name);
  // Ends the job as failed (e.g. a PS cannot be relaunched); the first
  // reason wins. Workers get kDone from then on.
  void Fail(const std::string& reason);
  // Fails a job whose training succeeded but whose ending did not (the
  // final checkpoint or export): the report and exit then say failed.
  void FailEnding(const std::string& reason);

  JobState state() const;
  std::string failure_reason() const;  // "" unless failed
  // Waits (real time) until the job is no longer running; false on timeout.
  bool WaitUntilFinished(std::chrono::milliseconds timeout);

  int64_t model_version() const;
  int target_workers() const;
  std::vector<WorkerInfo> workers() const;
  std::vector<EvaluationRecord> evaluation_history() const;
  std::vector<EpochLedger> ledger() const;
  // OK once every prediction record's outputs went to
  // MasterOptions::store_predictions; FailedPrecondition before.
  Status PredictionsComplete() const;

  // {"job":..., "state":..., "reason":..., "epoch":..., "num_epochs":...,
  //  "model_version":..., "workers":[{"id","name","pid","last_heartbeat_age_s",
  //  "stopping","tasks":[{"id","type","begin","end","epoch"}]}],
  //  "workers_target":..., "workers_registered":..., "workers_lost":...,
  //  "tasks":{"training":{"todo","doing","done"},"evaluation":{...},
  //  "prediction":{...}}, "evaluations":[{"model_version","epoch","final",
  //  "samples","loss","metrics":{name:value}}], "ledger":[DataLedger JSON],
  //  "ring":{"version","size","source_rank","members":[{"id","name",
  //  "address"}]}}; "ring" only once a worker has joined it.
  std::string StatusJson() const;
  // Prometheus text exposition format 0.0.4: edl_tasks{state,type},
  // edl_model_version, edl_epoch, edl_workers_alive, edl_workers_lost_total,
  // edl_records_trained_total, edl_evaluation_metric{name} (loss included),
  // edl_evaluation_model_version, edl_job_state{state} (1 for the current).
  std::string PrometheusText() const;
  // The end-of-job summary: outcome, the ledger, the last evaluation.
  std::string FinalReport() const;

  // REQUIRES: valid options (Create checks them).
  MasterCore(const MasterOptions& options, const Clock& clock);

 private:
  void FailLocked(const std::string& reason);
  void ReclaimLocked(const WorkerInfo& worker, const std::string& why);
  void AfterChangeLocked();
  void HandleEvaluationLocked(const protocol::ReportTaskRequest& r);
  // Removes the incarnation `id` of `name` from the ring if it is a member.
  void LeaveRingLocked(const std::string& name, int64_t id,
                       const std::string& why);
  protocol::RingView RingViewLocked() const;

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
  int64_t records_skipped_ = 0;  // corrupt records workers left out
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
};

}  // namespace edl::roles::master
