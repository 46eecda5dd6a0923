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
// Times are seconds of the master's clock. Not durable: a master that
// takes over starts an empty log (its own recovery is in the report's
// "master replaced" line).
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

  const std::vector<Incident>& incidents() const { return incidents_; }
  int64_t dropped() const { return dropped_; }

  // [{"worker","cause","detected_unix_s","detection_s","to_request_s",
  //   "pending_s","to_step_s","tasks_put_back","records_put_back",
  //   "pending_reason"}], a stage not reached yet null.
  nlohmann::json ToJson() const;
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
};

}  // namespace edl::roles::master
