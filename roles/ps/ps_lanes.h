// PsLanes: one long-lived thread per parameter server, each running the
// calls queued for its PS one after another in the order they were queued.
// A worker's pull queued after its push therefore reaches that PS after the
// push (one connection per PS, answered in order), which is what lets the
// worker leave a push in flight and still see its own gradients in its next
// pull. Calls to different PS run in parallel.
//
// Thread-safe. The destructor runs what is queued, then joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"

namespace edl::roles::ps {

class PsLanes {
 public:
  explicit PsLanes(int n);
  ~PsLanes();
  PsLanes(const PsLanes&) = delete;
  PsLanes& operator=(const PsLanes&) = delete;

  int size() const { return static_cast<int>(lanes_.size()); }

  // Runs fn on lane i after everything queued there before.
  void Submit(int i, std::function<void()> fn);

 private:
  struct Lane {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;  // guarded by mu
    bool done = false;                        // guarded by mu
    std::thread thread;
  };
  static void Loop(Lane* lane);

  std::vector<std::unique_ptr<Lane>> lanes_;
};

// Waits for a set of per-PS calls queued on lanes: each call records its
// Status; Wait() returns once every one has run, with the first failure by
// PS index ("PS 1: ...").
class PsCalls {
 public:
  explicit PsCalls(int n) : status_(n), pending_(n) {}

  // Queues fn(i) on lane i for every i in [0, n) (lanes.size() >= n).
  void Start(PsLanes& lanes, std::function<Status(int)> fn);
  Status Wait();
  // After Wait(): the status of PS i's call.
  const Status& status(int i) const { return status_[i]; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Status> status_;  // guarded by mu_ until Wait() returns
  int pending_;                 // guarded by mu_
};

}  // namespace edl::roles::ps
