// IncidentLog: the job's membership incidents and what each cost, for the
// final report's table and `edl status` (MasterCore keeps one, under its
// lock). An incident opens when a worker is lost while the job runs (its
// process exited, it missed its heartbeats, a new process took its name)
// and follows its replacement, the next process under the same name:
//   detection    last sign of life (registration, heartbeat, call) -> the
//                master knew (an upper bound on how long the loss went
//                unnoticed)
//   to_request   known -> replacement requested (the supervisor relaunches
//                at once unless its policy delays or forbids it)
//   pending      requested -> the replacement registered (process or pod
//                start, scheduling, model build)
//   to_step      registered -> its first training task
//   put_back     the tasks (and their records) the lost worker held, handed
//                back to be trained by whoever comes next: the work redone
// Times are seconds of the master's clock.
//
// Checkpoint incidents: a PS whose periodic checkpoint failed, from the
// first failed attempt until one succeeds (docs/distributed.md,
// 'Checkpoints'), with the last good version.
//
// The log is kept across master restarts as JSON (ToSaved, Restore): a new
// master shows the earlier incidents as they were when saved, before its
// own.
// Not thread-safe: MasterCore's lock guards it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace edl::roles::master {

struct Incident {
  std::string worker;  // "worker-1"
  std::string cause;   // "exited: killed by signal 9", "missed heartbeats for 2.1 s"
  int64_t last_seen_nanos = 0;
  int64_t detected_nanos = 0;
  int64_t detected_unix_nanos = 0;          // wall clock, to place it on a timeline
  std::optional<int64_t> requested_nanos;   // replacement requested
  std::optional<int64_t> registered_nanos;  // replacement registered
  std::optional<int64_t> first_task_nanos;  // replacement's first training task
  int64_t tasks_put_back = 0;
  int64_t records_put_back = 0;
  std::string pending_reason;  // why the replacement waited (the scheduler's words)
};

struct CheckpointIncident {
  std::string ps;  // "ps-1"
  int64_t first_failed_version = 0;
  int64_t last_failed_version = 0;
  int64_t last_good_version = -1;  // -1: none yet
  int64_t failures = 0;            // attempts failed
  std::string error;               // the last one's
  int64_t detected_unix_nanos = 0;
  std::optional<int64_t> recovered_version;  // the next good checkpoint
};

class IncidentLog {
 public:
  // Keeps at most `max_incidents` (the oldest are dropped, counted).
  explicit IncidentLog(size_t max_incidents = 1000) : max_(max_incidents) {}

  void OnLost(const std::string& worker, const std::string& cause, int64_t last_seen_nanos,
              int64_t now_nanos, int64_t unix_nanos, int64_t tasks_put_back,
              int64_t records_put_back);
  // The supervisor asked for a new process under `worker`'s name.
  void OnReplacementRequested(const std::string& worker, int64_t now_nanos);
  void OnRegistered(const std::string& worker, int64_t now_nanos);
  // The workers whose replacement has not registered yet.
  std::vector<std::string> AwaitingReplacement() const;
  // Why `worker`'s replacement is not running yet; kept once it registers.
  void OnPendingReason(const std::string& worker, const std::string& reason);
  void OnTrainingTask(const std::string& worker, int64_t now_nanos);

  // A PS's checkpoint attempt at `failed_version` failed; `failures`
  // attempts have failed since its last good version.
  void OnCheckpointFailed(const std::string& ps, int64_t failed_version, int64_t last_good_version,
                          int64_t failures, const std::string& error, int64_t unix_nanos);
  // A PS has a good checkpoint of `version`: its open incident ends.
  void OnCheckpointWritten(const std::string& ps, int64_t version);

  const std::vector<Incident>& incidents() const { return incidents_; }
  const std::vector<CheckpointIncident>& checkpoint_incidents() const { return checkpoints_; }
  int64_t dropped() const { return dropped_; }

  // [{"worker","cause","detected_unix_s","detection_s","to_request_s",
  //   "pending_s","to_step_s","tasks_put_back","records_put_back",
  //   "pending_reason"}], a stage not reached yet null.
  nlohmann::json ToJson() const;
  // [{"ps","first_failed_version","last_failed_version","last_good_version",
  //   "failures","error","detected_unix_s","recovered_version"}], earlier
  // masters' first; recovered_version null while open.
  nlohmann::json CheckpointsToJson() const;
  // {"incidents": ToJson(), "checkpoints": CheckpointsToJson()}, for a
  // new master's Restore.
  std::string ToSaved() const;
  // Takes an earlier master's ToSaved() as the start of the log;
  // false (nothing changed) when it is not what ToSaved writes.
  bool Restore(const std::string& saved);
  // A table, one line per incident ("at" is the detection's UTC time of
  // day); "" when there is none.
  std::string ToTable() const;

 private:
  // The newest incident of `worker` while its replacement has not had its
  // first training task, or null.
  Incident* Open(const std::string& worker);

  size_t max_;
  int64_t dropped_ = 0;
  std::vector<Incident> incidents_;
  std::vector<CheckpointIncident> checkpoints_;
  // Earlier masters' entries, as they saved them (JSON arrays; "" = none).
  std::string earlier_incidents_, earlier_checkpoints_;
};

}  // namespace edl::roles::master
