#include "roles/worker/allreduce_worker.h"

#include <unistd.h>

#include <algorithm>

#include "base/logging.h"
#include "data/batcher.h"
#include "data/examples_source.h"
#include "roles/local/evaluation.h"
#include "roles/worker/infer_task.h"
#include "roles/worker/retry.h"
#include "roles/worker/ring_agreement.h"
#include "roles/worker/training_state.h"
#include "tensor/ops.h"

namespace edl::roles::worker {
namespace {

using protocol::Dataset;
using protocol::Task;
using protocol::TaskType;

int RankOf(const protocol::RingView& v, int64_t worker_id) {
  for (size_t i = 0; i < v.members.size(); ++i) {
    if (v.members[i].worker_id == worker_id) return static_cast<int>(i);
  }
  return -1;
}

std::string Ms(double seconds) { return std::to_string(std::lround(seconds * 1000)) + " ms"; }

}  // namespace

AllreduceWorker::AllreduceWorker(AllreduceWorkerOptions options, CompiledModel& model,
                                 WorkerData data, protocol::MasterService& master,
                                 const Clock& clock)
    : options_(std::move(options)),
      cm_(model),
      data_(data),
      master_(master),
      clock_(clock),
      threads_(options_.adapt_threads && model.device == tensor::Device::kCPU, clock) {}

AllreduceWorker::~AllreduceWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    heartbeat_done_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
}

int64_t AllreduceWorker::steps() const { return cm_.optimizer->iterations(); }

void AllreduceWorker::RequestStop() {
  stop_ = true;
  cv_.notify_all();
}

void AllreduceWorker::Pause(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [&] { return stop_.load() || heartbeat_done_; });
}

template <typename F>
auto AllreduceWorker::Retry(const char* what, F f) -> decltype(f()) {
  return RetryWhileUnavailable(
      clock_, options_.master_outage_tolerance, options_.name, what,
      [this] { return stop_.load(); }, [this](std::chrono::milliseconds d) { Pause(d); }, f);
}

// Heartbeats, and the watchdog of the collective in flight: when the master
// no longer lists a member of this ring (it died, or stopped answering its
// heartbeats), the collective cannot finish, so it is aborted at once
// rather than at the transfer deadline.
void AllreduceWorker::HeartbeatLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!heartbeat_done_) {
    lock.unlock();
    auto hb = master_.Heartbeat({worker_id_});
    if (hb.ok() && hb->stop && !stop_) {
      EDL_LOG(INFO) << options_.name << ": the master asks this worker to stop";
      RequestStop();
    }
    std::vector<int64_t> members;
    {
      std::lock_guard<std::mutex> ring_lock(ring_mu_);
      if (live_ring_ != nullptr) members = live_members_;
    }
    if (!members.empty()) {
      auto v = master_.GetRingView({worker_id_, 0});
      if (v.ok()) {
        for (int64_t id : members) {
          if (RankOf(*v, id) >= 0) continue;
          std::lock_guard<std::mutex> ring_lock(ring_mu_);
          if (live_ring_ != nullptr && live_members_ == members) {
            EDL_LOG(WARNING) << options_.name << ": worker id " << id
                             << " left the ring (master's view v" << v->version
                             << "); aborting the step in flight";
            live_ring_->Abort();
          }
          break;
        }
      }
    }
    lock.lock();
    cv_.wait_for(lock, options_.heartbeat_interval, [&] { return heartbeat_done_; });
  }
}

Status AllreduceWorker::Run() {
  EDL_ASSIGN_OR_RETURN(listener_, net::RingListener::Listen(options_.ring_host, 0));
  auto reg = Retry("register with the master", [&] {
    return master_.RegisterWorker(
        {options_.name, static_cast<int64_t>(::getpid()), tensor::NumThreads()});
  });
  if (!reg.ok()) return reg.status().WithPrefix("registering with the master");
  worker_id_ = reg->worker_id;
  auto joined = Retry("join the ring", [&] {
    return master_.JoinRing({worker_id_, listener_->address()});
  });
  if (!joined.ok()) return joined.status().WithPrefix("joining the ring");
  EDL_LOG(INFO) << options_.name << ": registered as worker " << worker_id_ << "; ring listener "
                << listener_->address() << ", membership v" << joined->version;
  heartbeat_ = std::thread(&AllreduceWorker::HeartbeatLoop, this);
  Status result = Loop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    heartbeat_done_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  ring_.reset();
  EDL_LOG(INFO) << options_.name << ": " << steps() << " steps, " << tasks_done_
                << " tasks reported, " << redone_steps_ << " step(s) redone, " << reformations_
                << " ring formation(s)";
  return result;
}

Status AllreduceWorker::Loop() {
  while (true) {
    if (stop_) {
      if (!pending_.empty()) {
        EDL_LOG(INFO) << options_.name << ": stopping; handing back "
                      << TaskRangeName(pending_.front().task);
      }
      return Status::Ok();
    }
    // Work first, then the ring: a task handed out after a join is trained
    // on a ring that includes the joiner. "Nothing to do" was the answer
    // for the old ring (the master may hold tasks back until the ring has
    // its starting size): after a re-formation, ask again (and check the
    // ring again), so the new ring's first step is as full as it can be.
    EDL_RETURN_IF_ERROR(FetchWork());
    while (true) {
      const int64_t formations = reformations_;
      EDL_RETURN_IF_ERROR(EnsureRing());
      if (stop_ || reformations_ == formations || !idle_ || done_) break;
      EDL_RETURN_IF_ERROR(FetchWork());
    }
    if (stop_) continue;
    bool all_done = false, all_idle = false;
    int64_t total = 0;
    const double started = clock_.NowSeconds();
    Status s = Step(&all_done, &all_idle, &total);
    if (!s.ok()) {
      if (stop_) continue;
      if (s.code() != StatusCode::kUnavailable && s.code() != StatusCode::kDeadlineExceeded &&
          s.code() != StatusCode::kAborted && s.code() != StatusCode::kFailedPrecondition) {
        return s;
      }
      failed_at_ = clock_.NowSeconds();
      failed_version_ = view_.version;
      ring_.reset();
      // Only a step this member had a batch in is work redone (during the
      // ring's start every step is empty).
      if (!pending_.empty()) ++redone_steps_;
      EDL_LOG(WARNING) << options_.name << ": step " << steps() + 1 << " failed after "
                       << Ms(failed_at_ - started) << " (" << s.message()
                       << "); redoing it on a re-formed ring";
      continue;
    }
    if (all_done) return Finish();
    if (all_idle) {
      Pause(options_.wait_interval);
    } else {
      threads_.Step();
    }
  }
}

Status AllreduceWorker::FetchWork() {
  idle_ = false;
  if (!pending_.empty()) return Status::Ok();
  idle_ = true;
  if (done_) return Status::Ok();
  const int64_t request = ++get_requests_;
  auto task = Retry("get a task", [&] { return master_.GetTask({worker_id_, request}); });
  if (!task.ok()) return task.status().WithPrefix("getting a task");
  switch (task->type) {
    case TaskType::kDone: done_ = true; return Status::Ok();
    case TaskType::kWait: return Status::Ok();
    case TaskType::kTraining: {
      idle_ = false;
      const data::Source* source = data_.training;
      protocol::ReportTaskRequest failed;
      Status s = CheckTaskRange(*task, source);
      if (s.ok()) {
        // The task is one step's batch: read in one pass, then shuffled.
        const int64_t skipped_before = source->corrupt_records_skipped();
        auto records = data::ReadIntoMemory(*source, task->begin, task->end);
        if (records.ok() && (*records)->num_records() == 0) {
          // Every record was skipped as corrupt: nothing to step on.
          protocol::ReportTaskRequest empty;
          empty.records_skipped = source->corrupt_records_skipped() - skipped_before;
          return Report(*task, std::move(empty));
        }
        Result<data::Examples> batch = [&]() -> Result<data::Examples> {
          if (!records.ok()) return records.status();
          data::BatchOptions bo;
          bo.batch_size = (*records)->num_records();
          bo.shuffle = options_.shuffle;
          bo.seed = task->seed;
          return data::Batcher(**records, 0, bo.batch_size, bo).Batch(0);
        }();
        if (batch.ok()) {
          LocalBatch local;
          local.task = *task;
          local.examples = std::move(*batch);
          local.records_skipped = source->corrupt_records_skipped() - skipped_before;
          pending_.push_back(std::move(local));
          epochs_seen_ = std::max<int64_t>(epochs_seen_, task->epoch + 1);
          return Status::Ok();
        }
        s = batch.status().WithPrefix(TaskRangeName(*task));
      }
      failed.ok = false;
      failed.error = s.message();
      EDL_LOG(WARNING) << options_.name << ": task " << task->id << " failed: " << s.message();
      return Report(*task, failed);
    }
    case TaskType::kEvaluation:
    case TaskType::kPrediction: {
      // One task per step boundary, so the ring waits for one task's
      // forward passes at most.
      idle_ = false;
      const data::Source* source =
          task->dataset == Dataset::kValidation ? data_.validation : data_.prediction;
      protocol::ReportTaskRequest report;
      Status s = CheckTaskRange(*task, source);
      if (s.ok()) s = InferTask(cm_, *source, *task, options_.minibatch_size, &report);
      if (!s.ok()) {
        report = {};
        report.ok = false;
        report.error = s.message();
        EDL_LOG(WARNING) << options_.name << ": task " << task->id << " failed: " << s.message();
      }
      return Report(*task, std::move(report));
    }
  }
  return Internal("unknown task type");
}

Status AllreduceWorker::Report(const Task& task, protocol::ReportTaskRequest report) {
  report.worker_id = worker_id_;
  report.task_id = task.id;
  report.model_version = steps();
  auto r = Retry("report a task", [&] { return master_.ReportTask(report); });
  if (!r.ok()) return r.status().WithPrefix("reporting a task");
  ++tasks_done_;
  return Status::Ok();
}

Status AllreduceWorker::EnsureRing() {
  auto v = Retry("read the ring's membership", [&] {
    return master_.GetRingView({worker_id_, view_.version});
  });
  if (!v.ok()) return v.status().WithPrefix("reading the ring's membership");
  if (ring_ && v->version == view_.version) return Status::Ok();
  std::string why;
  if (ring_) {
    why = "membership v" + std::to_string(view_.version) + " -> v" + std::to_string(v->version);
  } else if (failed_at_ >= 0) {
    why = "the last step failed";
  } else {
    why = "first ring";
  }
  return Reform(why);
}

Status AllreduceWorker::Reform(const std::string& why) {
  const double start = clock_.NowSeconds();
  const double deadline = start + options_.retry_timeout.count() / 1000.0;
  ring_.reset();
  double last_join = start;
  double last_warning = start;
  std::string last_error = "no membership yet";
  while (!stop_) {
    const double now = clock_.NowSeconds();
    if (now > deadline) {
      return Unavailable("could not form a ring within " + Ms(now - start) + ": " + last_error);
    }
    auto v = Retry("read the ring's membership", [&] {
      return master_.GetRingView({worker_id_, view_.version});
    });
    if (!v.ok()) return v.status().WithPrefix("reading the ring's membership");
    const int rank = RankOf(*v, worker_id_);
    // Not a member (the master declared this worker lost for a while), or
    // a failure the master has not seen (no member left): joining again
    // makes a new version every member re-forms at.
    const bool unseen_failure = failed_at_ >= 0 && v->version == failed_version_ &&
                                now - failed_at_ > 3.0 && now - last_join > 3.0;
    if (rank < 0 || unseen_failure) {
      auto j = Retry("join the ring", [&] {
        return master_.JoinRing({worker_id_, listener_->address()});
      });
      if (!j.ok()) return j.status().WithPrefix("joining the ring");
      last_join = clock_.NowSeconds();
      continue;
    }
    net::RingSpec spec;
    spec.rank = rank;
    for (const auto& m : v->members) spec.peers.push_back(m.address);
    spec.version = v->version;
    spec.secret = options_.secret;
    spec.deadline = options_.collective_timeout;
    // Forming fails fast: a member the view still lists may be gone.
    spec.connect_deadline = std::min(options_.collective_timeout, std::chrono::milliseconds(1000));
    auto ring = net::Ring::Connect(*listener_, spec);
    if (!ring.ok()) {
      last_error = ring.status().message();
      EDL_LOG(DEBUG) << options_.name << ": ring v" << v->version << ": " << last_error;
      if (clock_.NowSeconds() - last_warning > 5) {
        EDL_LOG(WARNING) << options_.name << ": no ring yet after "
                         << Ms(clock_.NowSeconds() - start) << ": " << last_error;
        last_warning = clock_.NowSeconds();
      }
      Pause(std::chrono::milliseconds(50));
      continue;
    }
    ring_ = std::move(*ring);
    view_ = *v;
    Status synced = Synchronize();
    if (!synced.ok()) {
      // A neighbour may still be closing its previous ring: back off a
      // little before the next attempt rather than meeting it again.
      last_error = synced.message();
      ring_.reset();
      Pause(std::chrono::milliseconds(50));
      continue;
    }
    ++reformations_;
    const double formed = clock_.NowSeconds();
    std::string detail;
    if (failed_at_ >= 0) detail = ", " + Ms(formed - failed_at_) + " after the failed step";
    EDL_LOG(INFO) << options_.name << ": ring v" << view_.version << " formed (" << why
                  << "): " << ring_->size() << " member(s), rank " << ring_->rank() << ", in "
                  << Ms(formed - start) << detail << "; next step " << steps() + 1;
    failed_at_ = -1;
    return Status::Ok();
  }
  return Status::Ok();
}

Status AllreduceWorker::Synchronize() {
  const int n = ring_->size();
  const int rank = ring_->rank();
  // Who is new and how many steps each has completed.
  const int64_t mine = steps();
  std::vector<float> table = EncodePosition(n, rank, {fresh_, mine});
  EDL_RETURN_IF_ERROR(ring_->AllReduce(std::span<float>(table)));
  const RingAgreement agreed = Agree(table);
  const int source = agreed.source;
  const int64_t target = agreed.steps;
  if (!fresh_ && mine == target + 1) {
    // This member finished a step whose collective failed for another: the
    // ring goes on from before it, so its batch is trained again.
    if (last_) {
      pending_.push_front(std::move(*last_));
      pending_.front().reported = true;
      ++redone_steps_;
    }
    EDL_LOG(WARNING) << options_.name << ": step " << mine
                     << " completed here but not on every member; giving it back";
  } else if (!fresh_ && mine > target + 1) {
    EDL_LOG(ERROR) << options_.name << ": " << mine - target
                   << " steps ahead of the ring; continuing from its step " << target;
  }
  last_.reset();

  // The state, from the source to every member.
  std::string state;
  uint64_t size = 0;
  if (rank == source) {
    state = EncodeTrainingState(cm_);
    size = state.size();
  }
  EDL_RETURN_IF_ERROR(
      ring_->Broadcast(std::as_writable_bytes(std::span<uint64_t>(&size, 1)), source));
  state.resize(size);
  EDL_RETURN_IF_ERROR(ring_->Broadcast(
      std::as_writable_bytes(std::span<char>(state.data(), state.size())), source));
  if (rank != source) {
    Status s = DecodeTrainingState(state, cm_);
    if (!s.ok())
      return Internal("taking the ring's state from rank " + std::to_string(source) + ": " +
                      s.message());
  }
  fresh_ = false;
  auto synced = master_.RingSynced({worker_id_, view_.version});
  if (!synced.ok()) {
    EDL_LOG(WARNING) << options_.name << ": telling the master the ring is synchronized: "
                     << synced.status().message();
  }
  return Status::Ok();
}

}  // namespace edl::roles::worker
