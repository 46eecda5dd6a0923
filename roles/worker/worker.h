// Worker: the training loop of one worker process (docs/distributed.md): register with
// the master, then get a task, read exactly its records, train on them (pull
// dense parameters and the embedding rows the batch needs, forward, backward,
// push gradients), report, repeat; evaluation and prediction tasks likewise.
// A heartbeat thread keeps the master informed; a stop request (SIGTERM, or
// the master scaling down) ends the loop after the current minibatch without
// reporting the task, so the master hands it to someone else at once.
// With streamed data the worker holds up to two leases: once the current
// task's records are all read, it leases the next task and starts reading
// it, so that reading overlaps training across task boundaries too.
//
// Written against MasterService& and PsClient, so it runs the same with the
// master and PS in-process (tests) or remote. Run() on one thread;
// RequestStop() from any thread or a signal-watching thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/status.h"
#include "data/batch_prefetcher.h"
#include "data/source.h"
#include "roles/local/compiled_model.h"
#include "roles/protocol/services.h"
#include "roles/ps/ps_client.h"
#include "roles/thread_tuner.h"

namespace edl::roles::worker {

struct WorkerOptions {
  std::string name = "worker-0";
  int64_t minibatch_size = 64;
  // Pull dense parameters every N minibatches (1: before every step).
  int get_model_steps = 1;
  bool shuffle = true;  // records inside a training task, seeded by the task
  uint64_t seed = 0;    // the job's --seed: with epoch and record, seeds augmentation
  std::chrono::milliseconds heartbeat_interval{500};
  // How long to wait between GetTask calls answered kWait.
  std::chrono::milliseconds wait_interval{100};
  // How long to keep retrying an unreachable PS before giving up.
  std::chrono::milliseconds retry_timeout{60000};
  // How long to keep retrying an unreachable master (one being replaced
  // after its death, docs/distributed.md) before giving up:
  // --master_outage_tolerance.
  std::chrono::milliseconds master_outage_tolerance{600000};
  // A smaller CPU team while shared cores make it faster (--adapt_threads).
  bool adapt_threads = true;
};

// The data a worker may be asked to read (any may be null if the job has none).
struct WorkerData {
  const data::Source* training = nullptr;
  const data::Source* validation = nullptr;
  const data::Source* prediction = nullptr;
};

class Worker {
 public:
  Worker(WorkerOptions options, CompiledModel& model, WorkerData data,
         protocol::MasterService& master, ps::PsClient& ps, const Clock& clock);
  ~Worker();

  // Runs until the master says the job is done (OK), a stop is requested
  // (OK), or an unrecoverable error (the master or a PS unreachable past the
  // retry timeout).
  Status Run();
  void RequestStop();
  bool stop_requested() const { return stop_.load(); }

  int64_t worker_id() const { return worker_id_; }
  int64_t tasks_done() const { return tasks_done_; }
  // Seconds training waited for the reader thread to decode its batches.
  double input_stall_seconds() const { return input_stall_seconds_; }

 private:
  // A leased task and the reader of its records; `error` (then no reader)
  // when this worker cannot read it, reported as the task's failure.
  struct Lease {
    protocol::Task task;
    Status error;
    std::unique_ptr<data::BatchPrefetcher> batches;
  };
  Lease StartTask(const protocol::Task& task) const;
  // Trains or infers on the task's records, filling the report. Sets
  // interrupted_ (and returns OK) when a stop arrives between minibatches.
  Status RunTask(Lease& lease, protocol::ReportTaskRequest* report);
  // Leases the next task and starts reading it into ahead_; once per task,
  // one try (the main loop asks again, with retries, if this gets nothing).
  void LeaseAhead();
  // Waits for the push in flight, if any (retrying a PS that is
  // restarting), and takes the model version it returns and, for a named
  // push, the task's minibatches every PS has taken (resume_at_).
  Status SettlePush();
  // Pulls dense parameters and the rows the batch's ids need.
  Status PullFor(const std::vector<tensor::Tensor>& inputs, bool dense);
  // Calls f until it succeeds, is not Unavailable, or the retry timeout
  // passes (a restarting PS or master); returns the last status.
  template <typename F>
  auto Retry(const char* what, F f) -> decltype(f());
  // The same for calls of the master, for up to master_outage_tolerance.
  template <typename F>
  auto RetryMaster(const char* what, F f) -> decltype(f());
  void HeartbeatLoop();
  // Waits up to `d` or until a stop is requested.
  void Pause(std::chrono::milliseconds d);

  WorkerOptions options_;
  CompiledModel& cm_;
  WorkerData data_;
  protocol::MasterService& master_;
  ps::PsClient& ps_;
  const Clock& clock_;
  AdaptiveThreads threads_;
  int64_t worker_id_ = -1;
  int64_t get_requests_ = 0;        // GetTask request numbers (a retry repeats one)
  int64_t unanswered_request_ = 0;  // LeaseAhead's, when its reply was lost
  int64_t tasks_done_ = 0;
  int64_t model_version_ = 0;
  int64_t steps_ = 0;
  // Effectively-once pushes (roles/ps/applied_pushes.h): the current
  // task's minibatches below resume_at_ are taken by every PS (a retried
  // task skips them); settled_task_ is the last training task whose report
  // the master counted, for the PS to forget with the next push.
  int64_t resume_at_ = 0;
  int64_t settled_task_ = 0;
  // The minibatches of the task RunTask ran last, and of settled_task_.
  int64_t task_minibatches_ = 0;
  int64_t settled_minibatches_ = 0;
  // A PS answered that it lacks minibatches of the task before the one
  // pushed (it was restored from a checkpoint): the task runs again.
  bool task_behind_ = false;
  double input_stall_seconds_ = 0;
  bool read_ahead_ = false;   // some data set is streamed
  bool asked_ahead_ = false;  // LeaseAhead ran during the current task
  std::optional<Lease> ahead_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> interrupted_{false};  // a task was left unfinished by a stop
  bool heartbeat_done_ = false;           // guarded by mu_
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread heartbeat_;
};

}  // namespace edl::roles::worker
