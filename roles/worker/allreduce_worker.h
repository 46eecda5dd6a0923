// AllreduceWorker: one worker of --distribution_strategy=AllreduceStrategy
// (docs/allreduce.md). Workers train synchronously: every step each member
// takes one task from the master (one minibatch of records), computes its
// gradients, and the ring (net/collective/collective.h) sums them together with a small
// header (samples, "I am done"); each member divides by the step's total
// samples and applies the same update to its own copy of the parameters, so
// N members with batch B step exactly like one process with batch N*B.
//
// Membership is the master's (roles/master/rendezvous.h). At every step
// boundary a member reads the ring's version; when it changed, or when a
// collective failed (a peer died: its sockets close at once; a silent peer:
// the transfer deadline; a peer the master declared lost: the heartbeat
// thread aborts the collective), the member re-forms the ring with the new
// membership and the members agree on where they are:
//   * each says how many steps it has completed (c) and whether it is new;
//   * the ring continues from the smallest c among the old members: a member
//     one step ahead (its collective finished where another's failed) gives
//     that step back and trains its batch again; nobody applied anything
//     the others did not;
//   * one old member at that step broadcasts weights, optimizer slots and
//     step count to all (new members take part from the next step).
// So a change costs at most the step in flight; no process restarts and no
// checkpoint is read. A task is reported once, after its step is applied;
// a task given back by a roll-back is trained again but not reported again.
// The lost worker's unreported task goes back to the master's queue.
//
// The job ends when every member says it is done (the master answered
// kDone) in the same step; rank 0 then exports the model (--output).
// Not thread-safe except RequestStop().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/status.h"
#include "data/examples.h"
#include "net/collective/collective.h"
#include "roles/local/compiled_model.h"
#include "roles/protocol/services.h"
#include "roles/worker/worker.h"

namespace edl::roles::worker {

struct AllreduceWorkerOptions {
  std::string name = "worker-0";
  int64_t minibatch_size = 64;
  bool shuffle = true;                  // records inside a task, seeded by the task
  uint64_t seed = 0;                    // the job's --seed (augmentation keys)
  std::string ring_host = "127.0.0.1";  // where this worker's ring listens
  std::string secret;                   // the job secret (ring handshake)
  // A transfer that makes no progress this long fails the step.
  std::chrono::milliseconds collective_timeout{10000};
  size_t bucket_bytes = size_t{4} << 20;  // gradient fusion
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds wait_interval{100};
  // How long a ring re-formation may take before the worker gives up.
  std::chrono::milliseconds retry_timeout{60000};
  // How long to keep retrying an unreachable master (one being replaced
  // after its death, docs/distributed.md): --master_outage_tolerance.
  std::chrono::milliseconds master_outage_tolerance{600000};
  // Written by the ring's rank 0.
  std::string checkpoint_dir;
  int64_t checkpoint_steps = 0;
  int keep_checkpoint_max = 0;
  std::string output;  // the final model's export ("" = none)
  // A smaller CPU team while shared cores make it faster (--adapt_threads).
  bool adapt_threads = true;
};

class AllreduceWorker {
 public:
  AllreduceWorker(AllreduceWorkerOptions options, CompiledModel& model, WorkerData data,
                  protocol::MasterService& master, const Clock& clock);
  ~AllreduceWorker();

  // Runs until the ring finishes the job (OK), a stop is requested (OK: the
  // step in flight is abandoned and its task not reported), or an
  // unrecoverable error.
  Status Run();
  void RequestStop();

  int64_t steps() const;  // steps completed (the optimizer's iterations)
  int64_t tasks_done() const { return tasks_done_; }
  // Steps whose batch this member trained again (a failed step, or one
  // given back on a re-formed ring); empty steps do not count.
  int64_t redone_steps() const { return redone_steps_; }
  int64_t reformations() const { return reformations_; }

 private:
  // One minibatch this member trains in some step.
  struct LocalBatch {
    protocol::Task task;
    data::Examples examples;
    bool reported = false;        // given back by a roll-back after its report
    int64_t records_skipped = 0;  // left out as corrupt
  };

  Status Loop();
  // Takes the next task when nothing is pending: training → pending_,
  // evaluation/prediction → run and reported here, done → done_.
  Status FetchWork();
  // Makes ring_ current: the master's version, formed and synchronized.
  Status EnsureRing();
  Status Reform(const std::string& why);
  // The exchange of step counts and the state broadcast on a fresh ring.
  Status Synchronize();
  // One step over the ring; *all_done when every member is done.
  // One step over the ring: *all_done when every member is done, *all_idle
  // when no member had anything to do.
  Status Step(bool* all_done, bool* all_idle, int64_t* total_samples);
  Status Report(const protocol::Task& task, protocol::ReportTaskRequest report);
  Status Finish();
  void HeartbeatLoop();
  void Pause(std::chrono::milliseconds d);
  template <typename F>
  auto Retry(const char* what, F f) -> decltype(f());

  AllreduceWorkerOptions options_;
  CompiledModel& cm_;
  WorkerData data_;
  protocol::MasterService& master_;
  const Clock& clock_;
  AdaptiveThreads threads_;
  int64_t worker_id_ = -1;
  int64_t get_requests_ = 0;  // GetTask request numbers (a retry repeats one)
  std::unique_ptr<net::RingListener> listener_;
  std::unique_ptr<net::Ring> ring_;  // null when broken
  protocol::RingView view_;          // the view ring_ was formed from
  bool fresh_ = true;                // has never taken the ring's state
  bool done_ = false;                // the master said kDone
  bool idle_ = false;                // nothing to do at this step boundary
  std::deque<LocalBatch> pending_;   // front: the batch of the next step
  std::optional<LocalBatch> last_;   // the batch of the last completed step
  int64_t tasks_done_ = 0;
  int64_t redone_steps_ = 0;
  int64_t reformations_ = 0;
  int64_t epochs_seen_ = 0;            // 1 + the newest training task's epoch
  std::vector<tensor::Tensor> grads_;  // per parameter, reused every step
  double failed_at_ = -1;              // when the last collective failed, -1: none
  uint64_t failed_version_ = 0;

  std::atomic<bool> stop_{false};
  // The heartbeat thread's view of the collective in flight.
  std::mutex ring_mu_;
  net::Ring* live_ring_ = nullptr;     // guarded by ring_mu_
  std::vector<int64_t> live_members_;  // worker ids of live_ring_, guarded

  bool heartbeat_done_ = false;  // guarded by mu_
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread heartbeat_;
};

}  // namespace edl::roles::worker
