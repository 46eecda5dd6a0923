#include "roles/worker/infer_task.h"

#include "data/batch_prefetcher.h"
#include "data/batcher.h"
#include "nn/autograd.h"
#include "roles/local/evaluation.h"
#include "tensor/ops.h"

namespace edl::roles::worker {

using protocol::Dataset;
using protocol::TaskType;

Status CheckTaskRange(const protocol::Task& task, const data::Source* source) {
  if (source == nullptr) {
    return FailedPrecondition("this worker was given no data for " + TaskRangeName(task));
  }
  if (task.begin < 0 || task.end > source->num_records() || task.begin > task.end) {
    return InvalidArgument(TaskRangeName(task) + ": outside the " +
                           std::to_string(source->num_records()) + " records of " + source->name());
  }
  return Status::Ok();
}

Status InferTask(CompiledModel& cm, const data::Source& source, const protocol::Task& task,
                 int64_t batch_size, protocol::ReportTaskRequest* report) {
  EDL_RETURN_IF_ERROR(CheckTaskRange(task, &source));
  data::BatchOptions bo;
  bo.batch_size = batch_size;
  bo.shuffle = false;
  // Streamed batch by batch, a reader thread a few batches ahead.
  data::BatchPrefetcher batches(source, task.begin, task.end, bo, data::kPrefetchBatches);
  EDL_ASSIGN_OR_RETURN(auto metrics, cm.MakeMetrics());
  std::vector<tensor::Tensor> predictions;
  nn::NoGradGuard no_grad;
  for (;;) {
    auto next = batches.Next();
    if (!next.ok()) return next.status().WithPrefix(TaskRangeName(task));
    if (!next->has_value()) break;
    const data::Examples* batch = &**next;
    std::vector<nn::Var> out = cm.model->Forward(ModelInputs(*batch, cm), /*training=*/false);
    report->samples += batch->size();
    const tensor::Tensor& y = out[0].value();
    if (task.type == TaskType::kPrediction) {
      // Predictions go on the wire: host copies.
      predictions.push_back(
          y.Reshape({y.dim(0), y.dim(0) ? y.numel() / y.dim(0) : 0}).On(tensor::Device::kCPU));
      continue;
    }
    EDL_RETURN_IF_ERROR(CheckBatch(batch->labels, y, cm, metrics, TaskRangeName(task)));
    nn::Var loss = cm.loss->Compute(out[0], batch->labels);
    report->loss_sum +=
        static_cast<double>(loss.value().item()) * static_cast<double>(batch->size());
    if (!metrics.empty()) {
      tensor::Tensor pred = cm.ForMetrics(y);
      for (auto& m : metrics) m->Update(batch->labels, pred);
    }
  }
  for (auto& m : metrics) report->metrics.push_back({m->name(), m->State()});
  if (!predictions.empty()) report->predictions = tensor::Concat(predictions, 0);
  report->records_skipped = batches.records_skipped();
  return Status::Ok();
}

}  // namespace edl::roles::worker
