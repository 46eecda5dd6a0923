// Supervisor: keeps a desired set of named processes running on a Cluster
// under a relaunch policy, whatever the processes are (docs/distributed.md). It is
// the only reader of the cluster's WaitExit().
//
// When a desired process exits:
//   * killed by a signal (preempted, kill -9, OOM killer), or disrupted by
//     the cluster (ProcessExit::disrupted: preempted, evicted): relaunched,
//     always;
//   * OOMKilled by its cluster's memory limit: not relaunched (it would be
//     killed again), given up and reported;
//   * exit code != 0 (a failure): relaunched at most
//     RelaunchPolicy::max_failure_relaunches times in its life (ElasticDL's
//     --relaunch_on_worker_failure), then given up and reported;
//   * exit code 0: done, not relaunched, no longer desired.
// Every relaunch of a name counts against max_relaunches_per_minute; beyond
// it the relaunch is delayed (with one WARNING line) until the oldest
// relaunch in the window is a minute old, so a crash loop costs at most that
// many launches a minute instead of spinning (ElasticDL relaunched deleted
// pods without any bound).
//
// Remove() (scale down) takes a process out of the desired set and signals
// it (SIGTERM by default); if it has not exited after the grace period it
// gets SIGKILL. Its exit is reported with will_relaunch = false.
//
// Driving it: the owner calls Step() in its loop; callbacks run on that
// thread, outside the Supervisor's lock (they may call Add/Remove). Time for
// the rate limit and the grace period comes from the Clock (FakeClock in
// tests). Add/Remove/SetDesired and the queries are thread-safe.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "roles/cluster/cluster.h"

namespace edl::roles::cluster {

struct RelaunchPolicy {
  // Relaunches after non-zero exit codes, over the life of the name.
  int max_failure_relaunches = 1;
  // Relaunches (for any reason) of one name in any 60 s window.
  int max_relaunches_per_minute = 10;
};

class Supervisor {
 public:
  using ExitCallback = std::function<void(const ProcessExit& exit, bool will_relaunch)>;
  using GaveUpCallback = std::function<void(const std::string& name, const std::string& reason)>;
  static constexpr std::chrono::milliseconds kDefaultGracePeriod{5000};

  // `cluster` and `clock` must outlive the Supervisor.
  Supervisor(Cluster& cluster, Clock& clock,
             std::chrono::milliseconds grace_period = kDefaultGracePeriod);
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Set before the first Step(). Called for every exit the cluster reports
  // (also of processes the Supervisor did not start, with false).
  void OnExit(ExitCallback callback);
  // Called when a desired process will not be relaunched although it did
  // not finish: its failure relaunches are used up, or a relaunch failed.
  void OnGaveUp(GaveUpCallback callback);

  // Launches `spec` and keeps it running under `policy`. The Launch error,
  // AlreadyExists if `spec.name` is desired, FailedPrecondition while a
  // process of that name is still being removed.
  Status Add(const ProcessSpec& spec, const RelaunchPolicy& policy = {});
  // Keeps a process that already runs on the cluster (started by an earlier
  // owner: a master that replaced a dead one) under `policy`, without
  // launching it. NotFound if the cluster does not run `spec.name`,
  // AlreadyExists if it is desired.
  Status Adopt(const ProcessSpec& spec, const RelaunchPolicy& policy = {});
  // Stops keeping `name` running and sends it `signal` (SIGKILL follows
  // after the grace period, or after `grace` when given: a parameter server
  // writing its final checkpoint gets longer). NotFound if `name` is not
  // desired.
  Status Remove(const std::string& name, int signal = SIGTERM,
                std::optional<std::chrono::milliseconds> grace = std::nullopt);
  // Adds the specs whose names are not desired, removes (SIGTERM) the
  // desired names that are not in `specs`; specs already desired are left
  // as they are. Returns the first error, after trying every change.
  Status SetDesired(const std::vector<ProcessSpec>& specs, const RelaunchPolicy& policy = {});
  // Removes every desired process.
  void RemoveAll(int signal = SIGTERM);

  // Waits at most `timeout` for process exits and handles every one that is
  // available; then starts delayed relaunches that are due and sends SIGKILL
  // to removed processes past their grace period. Returns the number of
  // exits handled.
  int Step(std::chrono::milliseconds timeout);

  // Desired names, sorted (running or waiting for a relaunch).
  std::vector<std::string> Desired() const;
  // Names removed but not exited yet, sorted.
  std::vector<std::string> Stopping() const;
  // Relaunches of `name` so far (0 if never relaunched or unknown).
  int64_t Relaunches(const std::string& name) const;
  // Relaunches after failures (non-zero exits) used so far, by desired name;
  // and setting them for a desired name (an owner that replaced a dead one
  // goes on with its counts).
  std::map<std::string, int> FailureRelaunches() const;
  void SetFailureRelaunches(const std::string& name, int n);
  // Whether `name` is desired but waiting for the rate limit to relaunch it.
  bool RelaunchDelayed(const std::string& name) const;

 private:
  struct Entry {
    ProcessSpec spec;
    RelaunchPolicy policy;
    bool running = false;
    int failure_relaunches = 0;
    int64_t relaunches = 0;
    std::deque<int64_t> recent_relaunches;  // NowNanos() of those in the last minute
    std::optional<int64_t> relaunch_at;     // delayed by the rate limit
  };
  using Event = std::function<void()>;

  // Each appends the callbacks to run (after unlocking) to `events`.
  void HandleExit(const ProcessExit& exit, std::vector<Event>& events);
  // Relaunches now, or later if the rate limit says so.
  void Relaunch(Entry& entry, std::vector<Event>& events);
  void StartRelaunch(Entry& entry, std::vector<Event>& events);
  void GiveUp(std::string name, std::string reason, std::vector<Event>& events);
  Status RemoveLocked(const std::string& name, int signal,
                      std::optional<std::chrono::milliseconds> grace = std::nullopt);

  Cluster& cluster_;
  Clock& clock_;
  const int64_t grace_nanos_;
  ExitCallback on_exit_;
  GaveUpCallback on_gave_up_;

  mutable std::mutex mu_;
  // Guarded by mu_.
  std::map<std::string, Entry> desired_;
  std::map<std::string, int64_t> stopping_;  // name -> NowNanos() to SIGKILL at
};

}  // namespace edl::roles::cluster
