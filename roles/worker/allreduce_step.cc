// AllreduceWorker's step (roles/worker/allreduce_worker.h): forward and
// backward on this member's batch, one fused allreduce of the weighted
// gradients and the step header, the shared update, and the end of the job.
#include <algorithm>

#include "base/logging.h"
#include "nn/autograd.h"
#include "nn/functional.h"
#include "roles/local/checkpoint.h"
#include "roles/local/evaluation.h"
#include "roles/local/model_export.h"
#include "roles/worker/allreduce_worker.h"
#include "roles/worker/infer_task.h"
#include "tensor/ops.h"

namespace edl::roles::worker {

using protocol::Task;

Status AllreduceWorker::Step(bool* all_done, bool* all_idle, int64_t* total_samples) {
  // Frozen weights never change: identical on every member, nothing to
  // reduce.
  std::vector<nn::Parameter*> params = cm_.model->parameters();
  std::erase_if(params, [](const nn::Parameter* p) { return p->frozen; });
  LocalBatch* batch = pending_.empty() ? nullptr : &pending_.front();
  protocol::ReportTaskRequest report;
  int64_t n = 0;
  EDL_ASSIGN_OR_RETURN(auto metrics, cm_.MakeMetrics());
  std::vector<nn::Var> out;
  if (batch != nullptr) {
    out = cm_.model->Forward(ModelInputs(batch->examples, cm_), /*training=*/true,
                             AugmentationKeys(batch->examples, options_.seed, batch->task.epoch));
    Status fits = CheckBatch(batch->examples.labels, out[0].value(), cm_, metrics,
                             TaskRangeName(batch->task));
    if (!fits.ok()) {
      // This member's data does not fit: the task fails, the ring steps
      // on without it.
      report.ok = false;
      report.error = fits.message();
      const Task task = batch->task;
      pending_.pop_front();
      batch = nullptr;
      EDL_RETURN_IF_ERROR(Report(task, std::move(report)));
      report = {};
    }
  }
  if (batch != nullptr) {
    nn::Var loss = cm_.loss->Compute(out[0], batch->examples.labels);
    nn::Var reg = cm_.model->RegularizationLoss();
    nn::Backward(reg.requires_grad() ? nn::fn::Add(loss, reg) : loss);
    n = batch->examples.size();
    report.samples = n;
    report.loss_sum = static_cast<double>(loss.value().item()) * static_cast<double>(n);
    if (!metrics.empty()) {
      tensor::Tensor pred = cm_.ForMetrics(out[0].value());
      for (auto& m : metrics) m->Update(batch->examples.labels, pred);
    }
    for (auto& m : metrics) report.metrics.push_back({m->name(), m->State()});
  }

  // Gradients weighted by this member's samples (their sum over the ring,
  // divided by the ring's samples, is the gradient of the global batch's
  // mean loss); non-trainable state (batch-norm statistics) averaged. The
  // ring moves host buffers: device gradients and state are staged through
  // host copies here and the reduced ones uploaded below.
  const tensor::Device host = tensor::Device::kCPU;
  const float world = static_cast<float>(ring_->size());
  grads_.resize(params.size());
  std::vector<std::span<float>> spans;
  spans.reserve(params.size() + 1);
  for (size_t i = 0; i < params.size(); ++i) {
    nn::Parameter* p = params[i];
    tensor::Tensor& g = grads_[i];
    if (!g.defined() || g.shape() != p->value.shape()) g = tensor::Tensor::Empty(p->value.shape());
    float* gd = g.f32();
    const int64_t numel = g.numel();
    if (!p->trainable) {
      const tensor::Tensor value = p->value.On(host);
      const float* v = value.f32();
      for (int64_t j = 0; j < numel; ++j) gd[j] = v[j] / world;
    } else {
      const float scale = static_cast<float>(n);
      if (p->grad.defined() && n > 0) {
        const tensor::Tensor grad = p->grad.On(host);
        const float* src = grad.f32();
        for (int64_t j = 0; j < numel; ++j) gd[j] = src[j] * scale;
      } else {
        std::fill(gd, gd + numel, 0.f);
      }
      if (p->sparse_grad && n > 0) {
        const tensor::SparseRows& rows = *p->sparse_grad;
        const int64_t count = rows.ids.numel();
        const int64_t width = count > 0 ? rows.values.numel() / count : 0;
        const tensor::Tensor host_ids = rows.ids.On(host);
        const tensor::Tensor host_values = rows.values.On(host);
        const int64_t* ids = host_ids.i64();
        const float* values = host_values.f32();
        for (int64_t r = 0; r < count; ++r) {
          float* row = gd + ids[r] * width;
          for (int64_t j = 0; j < width; ++j) row[j] += values[r * width + j] * scale;
        }
      }
    }
    spans.emplace_back(gd, static_cast<size_t>(numel));
  }
  // Header: samples, members done, members with nothing to do.
  float header[3] = {static_cast<float>(n), done_ ? 1.f : 0.f, idle_ ? 1.f : 0.f};
  spans.emplace_back(header, 3);
  for (nn::Parameter* p : params) p->ZeroGrad();

  {
    std::lock_guard<std::mutex> lock(ring_mu_);
    live_ring_ = ring_.get();
    live_members_.clear();
    for (const auto& m : view_.members) live_members_.push_back(m.worker_id);
  }
  Status s = ring_->AllReduce(spans, options_.bucket_bytes, net::ReduceOp::kSum);
  {
    std::lock_guard<std::mutex> lock(ring_mu_);
    live_ring_ = nullptr;
  }
  if (!s.ok()) return s;

  const int64_t total = static_cast<int64_t>(header[0]);
  *total_samples = total;
  *all_done = static_cast<int>(header[1]) == ring_->size();
  *all_idle = static_cast<int>(header[2]) == ring_->size();
  if (total > 0) {
    const float inv = 1.f / static_cast<float>(total);
    for (size_t i = 0; i < params.size(); ++i) {
      nn::Parameter* p = params[i];
      float* gd = grads_[i].f32();
      const int64_t numel = grads_[i].numel();
      if (!p->trainable) {
        p->value.CopyFrom(grads_[i]);  // an upload for a device parameter
        continue;
      }
      for (int64_t j = 0; j < numel; ++j) gd[j] *= inv;
      p->grad = grads_[i].On(p->value.device());
    }
    cm_.optimizer->Apply(params);
    for (nn::Parameter* p : params) p->ZeroGrad();
    last_.reset();
    if (batch != nullptr) {
      last_ = std::move(pending_.front());
      pending_.pop_front();
      report.records_skipped = last_->records_skipped;
      if (!last_->reported) EDL_RETURN_IF_ERROR(Report(last_->task, std::move(report)));
      last_->reported = true;
    }
    if (ring_->rank() == 0 && options_.checkpoint_steps > 0 && !options_.checkpoint_dir.empty() &&
        steps() % options_.checkpoint_steps == 0) {
      cm_.epoch = std::max<int64_t>(cm_.epoch, epochs_seen_ - 1);
      Status c = WriteCheckpoint(options_.checkpoint_dir, cm_.MakeCheckpoint(),
                                 options_.keep_checkpoint_max);
      if (!c.ok()) EDL_LOG(WARNING) << options_.name << ": checkpoint: " << c.message();
    }
  }
  return Status::Ok();
}

Status AllreduceWorker::Finish() {
  EDL_LOG(INFO) << options_.name << ": every member is done after " << steps() << " steps";
  if (ring_->rank() == 0 && !options_.output.empty()) {
    cm_.epoch = std::max(cm_.epoch, epochs_seen_);
    EDL_RETURN_IF_ERROR(ExportModel(cm_, options_.output).WithPrefix("exporting the model"));
    EDL_LOG(INFO) << options_.name << ": exported the trained model to " << options_.output;
  }
  return Status::Ok();
}

}  // namespace edl::roles::worker
