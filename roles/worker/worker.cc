#include "roles/worker/worker.h"

#include <unistd.h>

#include <algorithm>

#include "base/logging.h"
#include "data/batch_prefetcher.h"
#include "data/batcher.h"
#include "nn/autograd.h"
#include "nn/functional.h"
#include "roles/local/evaluation.h"
#include "roles/ps/applied_pushes.h"
#include "roles/worker/infer_task.h"
#include "roles/worker/retry.h"
#include "tensor/ops.h"

namespace edl::roles::worker {
namespace {

using protocol::Dataset;
using protocol::Task;
using protocol::TaskType;

}  // namespace

Worker::Worker(WorkerOptions options, CompiledModel& model, WorkerData data,
               protocol::MasterService& master, ps::PsClient& ps, const Clock& clock)
    : options_(std::move(options)),
      cm_(model),
      data_(data),
      master_(master),
      ps_(ps),
      clock_(clock),
      threads_(options_.adapt_threads && model.device == tensor::Device::kCPU, clock) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    heartbeat_done_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
}

void Worker::RequestStop() {
  stop_ = true;
  cv_.notify_all();
}

void Worker::Pause(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [&] { return stop_.load() || heartbeat_done_; });
}

template <typename F>
auto Worker::Retry(const char* what, F f) -> decltype(f()) {
  return RetryWhileUnavailable(
      clock_, options_.retry_timeout, options_.name, what, [this] { return stop_.load(); },
      [this](std::chrono::milliseconds d) { Pause(d); }, f);
}

template <typename F>
auto Worker::RetryMaster(const char* what, F f) -> decltype(f()) {
  return RetryWhileUnavailable(
      clock_, options_.master_outage_tolerance, options_.name, what,
      [this] { return stop_.load(); }, [this](std::chrono::milliseconds d) { Pause(d); }, f);
}

void Worker::HeartbeatLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!heartbeat_done_) {
    lock.unlock();
    auto r = master_.Heartbeat({worker_id_});
    if (r.ok() && r->stop && !stop_) {
      EDL_LOG(INFO) << options_.name << ": the master asks this worker to stop";
      RequestStop();
    }
    lock.lock();
    cv_.wait_for(lock, options_.heartbeat_interval, [&] { return heartbeat_done_; });
  }
}

Status Worker::Run() {
  auto reg = RetryMaster("register with the master", [&] {
    return master_.RegisterWorker(
        {options_.name, static_cast<int64_t>(::getpid()), tensor::NumThreads()});
  });
  if (!reg.ok()) return reg.status().WithPrefix("registering with the master");
  worker_id_ = reg->worker_id;
  EDL_LOG(INFO) << options_.name << ": registered as worker " << worker_id_;
  heartbeat_ = std::thread(&Worker::HeartbeatLoop, this);

  for (const data::Source* d : {data_.training, data_.validation, data_.prediction}) {
    read_ahead_ = read_ahead_ || (d != nullptr && d->streamed());
  }
  Status result;
  while (!stop_) {
    Lease lease;
    if (ahead_) {
      lease = std::move(*ahead_);
      ahead_.reset();
    } else {
      const int64_t request = unanswered_request_ > 0 ? unanswered_request_ : ++get_requests_;
      unanswered_request_ = 0;
      auto task = RetryMaster("get a task", [&] { return master_.GetTask({worker_id_, request}); });
      if (!task.ok()) {
        result = task.status().WithPrefix("getting a task");
        break;
      }
      if (task->type == TaskType::kDone) break;
      if (task->type == TaskType::kWait) {
        Pause(options_.wait_interval);
        continue;
      }
      lease = StartTask(*task);
    }
    asked_ahead_ = false;
    const Task& task = lease.task;
    protocol::ReportTaskRequest report;
    report.worker_id = worker_id_;
    report.task_id = task.id;
    Status s = lease.error.ok() ? RunTask(lease, &report) : lease.error;
    // The task's last push is answered before the task is reported (or
    // handed back by a stop).
    Status settled = SettlePush();
    if (s.ok()) s = settled;
    // A PS restored from a checkpoint lacks some of the task's minibatches:
    // the task runs again from its first record (the minibatches every PS
    // has are skipped once the first push's answers say which).
    if (task_behind_ && stop_) interrupted_ = true;  // handed back, not reported
    while (s.ok() && task_behind_ && !interrupted_) {
      task_behind_ = false;
      EDL_LOG(INFO) << options_.name << ": a PS restored from a checkpoint lacks minibatches of "
                    << TaskRangeName(task) << ": running it again";
      lease.batches = StartTask(task).batches;
      report = protocol::ReportTaskRequest{};
      report.worker_id = worker_id_;
      report.task_id = task.id;
      s = RunTask(lease, &report);
      settled = SettlePush();
      if (s.ok()) s = settled;
      if (task_behind_ && stop_) interrupted_ = true;
    }
    task_behind_ = false;
    if (interrupted_) {
      // Stopping mid-task: not reporting hands the task back as soon as the
      // master learns this worker is gone (process exit or heartbeats).
      EDL_LOG(INFO) << options_.name << ": stopping; handing back " << TaskRangeName(task);
      break;
    }
    if (!s.ok()) {
      report.ok = false;
      report.error = s.message();
      EDL_LOG(WARNING) << options_.name << ": task " << task.id << " failed: " << s.message();
    }
    report.model_version = model_version_;
    auto r = RetryMaster("report a task", [&] { return master_.ReportTask(report); });
    if (!r.ok()) {
      result = r.status().WithPrefix("reporting a task");
      break;
    }
    // Counted and durable at the master: no other attempt will push it.
    if (r->counted && task.type == TaskType::kTraining) {
      settled_task_ = task.id;
      settled_minibatches_ = task_minibatches_;
    }
    ++tasks_done_;
    if (!s.ok() && s.code() == StatusCode::kUnavailable) {
      result = s;  // a PS stayed unreachable: this worker cannot go on
      break;
    }
  }
  if (ahead_) {
    // Left unreported like an interrupted task: handed back when the master
    // learns this worker is gone.
    EDL_LOG(INFO) << options_.name << ": stopping; handing back " << TaskRangeName(ahead_->task);
    ahead_.reset();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    heartbeat_done_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  return result;
}

Worker::Lease Worker::StartTask(const Task& task) const {
  Lease lease;
  lease.task = task;
  const data::Source* source = task.dataset == Dataset::kTraining     ? data_.training
                               : task.dataset == Dataset::kValidation ? data_.validation
                                                                      : data_.prediction;
  lease.error = CheckTaskRange(task, source);
  if (!lease.error.ok()) return lease;
  data::BatchOptions bo;
  bo.batch_size = options_.minibatch_size;
  bo.shuffle = options_.shuffle && task.type == TaskType::kTraining;
  bo.seed = task.seed;
  // A reader thread decodes the next minibatches while this one trains
  // (a streamed source decodes only the task's records).
  lease.batches = std::make_unique<data::BatchPrefetcher>(*source, task.begin, task.end, bo,
                                                          data::kPrefetchBatches);
  return lease;
}

void Worker::LeaseAhead() {
  asked_ahead_ = true;
  const int64_t request = ++get_requests_;
  auto task = master_.GetTask({worker_id_, request});
  // Unanswered: the master may have leased it anyway; the next GetTask
  // repeats the number and gets that task.
  if (!task.ok()) unanswered_request_ = request;
  if (!task.ok() || task->type == TaskType::kDone || task->type == TaskType::kWait) return;
  ahead_ = StartTask(*task);
}

Status Worker::RunTask(Lease& lease, protocol::ReportTaskRequest* report) {
  const Task& task = lease.task;
  data::BatchPrefetcher& batches = *lease.batches;
  // The task's minibatches (fewer if records are skipped as corrupt): a
  // push asks for the next step's pull only when a next step is expected,
  // since the task's last answer would be thrown away.
  const int64_t mb = std::max<int64_t>(1, options_.minibatch_size);
  const int64_t expected_steps = (task.end - task.begin + mb - 1) / mb;
  int64_t task_steps = 0;
  const bool training = task.type == TaskType::kTraining;
  auto metrics = cm_.MakeMetrics();
  if (!metrics.ok()) return metrics.status();
  std::vector<tensor::Tensor> predictions;
  // The minibatch's index in the task (the same minibatches in every
  // attempt: the order is seeded by the task); those below resume_at_ are
  // taken by every PS, so a retried task skips them.
  int64_t index = -1;
  resume_at_ = 0;
  if (!training) {
    Status s = Retry("pull parameters", [&] { return ps_.PullDense(cm_.model->parameters()); });
    if (!s.ok()) return s;
  }
  for (;;) {
    if (stop_) {
      interrupted_ = true;
      return Status::Ok();
    }
    const double stalled = batches.stall_seconds();
    auto next = batches.Next();
    input_stall_seconds_ += batches.stall_seconds() - stalled;
    if (!next.ok()) return next.status().WithPrefix(TaskRangeName(task));
    if (!next->has_value()) break;
    if (read_ahead_ && !asked_ahead_ && batches.finished_reading()) LeaseAhead();
    ++index;
    if (training && index < resume_at_) continue;
    data::Examples* batch = &**next;
    // Embedding rows are pulled for the host ids; Forward gets the inputs on
    // the model's device.
    std::vector<tensor::Tensor> inputs = ModelInputs(*batch, cm_, tensor::Device::kCPU);
    const bool dense = training && steps_ % std::max(1, options_.get_model_steps) == 0;
    Status pulled = Retry("pull parameters", [&] {
      Status s = PullFor(inputs, dense);
      if (s.code() == StatusCode::kUnavailable) ps_.ForgetVersions();
      return s;
    });
    if (!pulled.ok()) return pulled;
    for (tensor::Tensor& t : inputs) t = t.On(cm_.device);

    std::unique_ptr<nn::NoGradGuard> no_grad;
    if (!training) no_grad = std::make_unique<nn::NoGradGuard>();
    std::vector<nn::Var> out = cm_.model->Forward(
        inputs, training,
        training ? AugmentationKeys(*batch, options_.seed, task.epoch) : std::vector<uint64_t>());
    if (task.type == TaskType::kPrediction) {
      const tensor::Tensor& y = out[0].value();
      // Predictions go on the wire: host copies.
      predictions.push_back(
          y.Reshape({y.dim(0), y.dim(0) ? y.numel() / y.dim(0) : 0}).On(tensor::Device::kCPU));
      report->samples += batch->size();
      continue;
    }
    Status fits = CheckBatch(batch->labels, out[0].value(), cm_, *metrics, TaskRangeName(task));
    if (!fits.ok()) return fits;
    nn::Var loss = cm_.loss->Compute(out[0], batch->labels);
    if (training) {
      nn::Var reg = cm_.model->RegularizationLoss();
      nn::Backward(reg.requires_grad() ? nn::fn::Add(loss, reg) : loss);
      // The push stays in flight while the next step reads its batch,
      // pulls (queued behind it on each PS's lane, so it sees it) and
      // computes; at most one push is in flight.
      EDL_RETURN_IF_ERROR(SettlePush());
      if (task_behind_) {  // Run() runs the task again
        for (auto* p : cm_.model->parameters()) p->ZeroGrad();
        return Status::Ok();
      }
      auto params = cm_.model->parameters();
      // When the next step pulls dense parameters, the push's answer brings
      // them (one round trip instead of two).
      const bool next_pulls = ++task_steps < expected_steps &&
                              (steps_ + 1) % std::max(1, options_.get_model_steps) == 0;
      if (index >= resume_at_) {  // else every PS took it while this one computed
        ps::PushId id{task.id, index, settled_task_, settled_minibatches_};
        settled_task_ = 0;
        ps_.StartPush(params, worker_id_, next_pulls, id);
      }
      for (auto* p : params) p->ZeroGrad();
      ++steps_;
      threads_.Step();
    }
    report->loss_sum +=
        static_cast<double>(loss.value().item()) * static_cast<double>(batch->size());
    report->samples += batch->size();
    if (!metrics->empty()) {
      tensor::Tensor pred = cm_.ForMetrics(out[0].value());
      for (auto& m : *metrics) m->Update(batch->labels, pred);
    }
  }
  task_minibatches_ = index + 1;
  for (auto& m : *metrics) report->metrics.push_back({m->name(), m->State()});
  if (!predictions.empty()) report->predictions = tensor::Concat(predictions, 0);
  report->records_skipped = batches.records_skipped();
  return Status::Ok();
}

Status Worker::SettlePush() {
  if (!ps_.push_in_flight()) return Status::Ok();
  auto pushed = Retry("push gradients", [&] {
    auto r = ps_.FinishPush();
    if (!r.ok() && r.status().code() == StatusCode::kUnavailable) ps_.ForgetVersions();
    return r;
  });
  if (!pushed.ok()) {
    ps_.AbandonPush();
    return pushed.status();
  }
  for (int64_t v : pushed->versions) model_version_ = std::max(model_version_, v);
  if (pushed->behind > 0) {
    task_behind_ = true;
    return Status::Ok();
  }
  if (pushed->duplicates > 0 && !pushed->task_taken.empty()) {
    const int64_t all = *std::min_element(pushed->task_taken.begin(), pushed->task_taken.end());
    if (all == ps::AppliedPushes::kSettled) {
      EDL_LOG(INFO) << options_.name << ": the task was done elsewhere (" << pushed->duplicates
                    << " PS had this minibatch already): skipping the rest of it";
    } else if (all > resume_at_ && resume_at_ == 0) {  // once per attempt
      EDL_LOG(INFO) << options_.name << ": " << pushed->duplicates
                    << " PS had this minibatch already; every PS has taken the task's first " << all
                    << " minibatches: going on from there";
    }
    resume_at_ = std::max(resume_at_, all);
  }
  return Status::Ok();
}

Status Worker::PullFor(const std::vector<tensor::Tensor>& inputs, bool dense) {
  if (dense) EDL_RETURN_IF_ERROR(ps_.PullDense(cm_.model->parameters()));
  for (const auto& e : cm_.model->EmbeddingInputs()) {
    EDL_RETURN_IF_ERROR(ps_.PullRows(*e.table, inputs[e.input_index]));
  }
  return Status::Ok();
}

}  // namespace edl::roles::worker
