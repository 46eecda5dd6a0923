// Membership: the workers of the job (docs/distributed.md). Each registration is a new
// incarnation with a unique id (1, 2, ...), even for a relaunched process of
// the same name; registering a name that is still alive declares the old
// incarnation dead (it was relaunched before its death was noticed).
// Any call of a worker counts as a heartbeat. A worker silent for
// `heartbeat_timeout` is declared dead on Tick; OnExit (the cluster saw the
// process end) declares it dead at once. A worker asked to leave (scale down)
// stays a member, `stopping`, until it exits or goes silent.
//
// Not thread-safe (MasterCore guards it). Times are Clock nanoseconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace edl::roles::protocol {
class Reader;
class Writer;
}  // namespace edl::roles::protocol

namespace edl::roles::master {

struct WorkerInfo {
  int64_t id = 0;
  std::string name;
  int64_t pid = 0;
  int num_threads = 0;  // as the worker reported it
  int64_t registered_nanos = 0;
  int64_t last_seen_nanos = 0;
  bool stopping = false;  // asked to leave
  // Makes the worker's calls idempotent across lost replies and a master
  // restart (a retried call repeats its answer instead of acting twice):
  // its last GetTask request number and the task it was given, and the
  // last task it reported.
  int64_t last_get_request = 0;
  int64_t last_get_task = 0;
  int64_t last_report_task = 0;
  // Tasks this registration finished (for status and the job page; not
  // journaled: a restarted master counts from 0).
  int64_t tasks_done = 0;
};

enum class Standing {
  kAlive,
  kStopping,  // alive, asked to leave
  kGone,      // declared dead or exited
  kUnknown,   // never registered here
};

class Membership {
 public:
  // `target_workers`: workers wanted; 0 = any number.
  Membership(int64_t heartbeat_timeout_nanos, int target_workers);

  struct Registration {
    WorkerInfo worker;
    std::optional<WorkerInfo> replaced;  // the old incarnation of the name
  };
  // A worker registering beyond the target is admitted as stopping.
  Registration Register(const std::string& name, int64_t pid, int64_t now_nanos,
                        int num_threads = 0);

  // Records a sign of life; returns the worker's standing.
  Standing Touch(int64_t worker_id, int64_t now_nanos);
  Standing StandingOf(int64_t worker_id) const;

  // Declares dead, and returns, the workers silent for longer than the
  // heartbeat timeout.
  std::vector<WorkerInfo> Tick(int64_t now_nanos);
  // Declares the live worker of that name dead; nullopt if none.
  std::optional<WorkerInfo> OnExit(const std::string& name);
  // Declares the live worker `id` dead (replaying a Tick); nullopt if none.
  std::optional<WorkerInfo> DeclareDead(int64_t id);
  // The live worker `id`, or null.
  WorkerInfo* Find(int64_t id);
  // The last task worker `id` reported, alive or gone (0 if none), and
  // setting it: a retried report of a worker declared dead meanwhile is
  // recognized too.
  int64_t LastReport(int64_t id) const;
  void SetLastReport(int64_t id, int64_t task_id);

  // The durable state (roles/master/master_state.cc). Load replaces it; the
  // workers restored count as seen at `now_nanos` (they get a heartbeat
  // timeout to call the new master). Errors go to the reader.
  void Save(protocol::Writer& w) const;
  void Load(protocol::Reader& r, int64_t now_nanos);

  // Asks the active workers beyond `n` (highest names first: "worker-10"
  // before "worker-9") to leave; returns their names. A worker once asked
  // stays asked (it may already be leaving); growing is the cluster's job
  // (launch more). 0 = any number.
  std::vector<std::string> SetTarget(int n);
  // Asks the live worker of that name to leave; false if none.
  bool RequestStop(const std::string& name);
  // Sets the target without asking anyone to leave (the process owner
  // picks whom, with RequestStop).
  void set_target(int n) { target_ = n; }

  const std::map<int64_t, WorkerInfo>& alive() const { return alive_; }
  int active_count() const;  // alive and not stopping
  int target() const { return target_; }
  int64_t registrations() const { return next_id_ - 1; }
  int64_t deaths() const { return deaths_; }

 private:
  std::map<int64_t, WorkerInfo>::iterator FindByName(const std::string& name);

  int64_t heartbeat_timeout_;
  int target_;
  int64_t next_id_ = 1;
  int64_t deaths_ = 0;
  std::map<int64_t, WorkerInfo> alive_;          // by id, includes stopping ones
  std::map<int64_t, int64_t> gone_last_report_;  // id -> task, of workers gone
};

// Orders names as people do: "worker-9" < "worker-10".
bool NaturalLess(const std::string& a, const std::string& b);

}  // namespace edl::roles::master
