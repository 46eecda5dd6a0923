#include "roles/worker/infer_task.h"

#include "data/batcher.h"
#include "data/examples_source.h"
#include "nn/autograd.h"
#include "roles/evaluation.h"
#include "tensor/ops.h"

namespace edl::roles::worker {

using protocol::Dataset;
using protocol::TaskType;

std::string TaskRangeName(const protocol::Task& t) {
  const char* set = t.dataset == Dataset::kTraining     ? "training data"
                    : t.dataset == Dataset::kValidation ? "validation data"
                                                        : "prediction data";
  return std::string(set) + " records [" + std::to_string(t.begin) + ", " +
         std::to_string(t.end) + ")";
}

Status CheckTaskRange(const protocol::Task& task, const data::Source* source) {
  if (source == nullptr) {
    return FailedPrecondition("this worker was given no data for " + TaskRangeName(task));
  }
  if (task.begin < 0 || task.end > source->num_records() || task.begin > task.end) {
    return InvalidArgument(TaskRangeName(task) + ": outside the " +
                           std::to_string(source->num_records()) + " records of " +
                           source->name());
  }
  return Status::Ok();
}

Status InferTask(CompiledModel& cm, const data::Source& source, const protocol::Task& task,
                 int64_t batch_size, protocol::ReportTaskRequest* report) {
  EDL_RETURN_IF_ERROR(CheckTaskRange(task, &source));
  data::BatchOptions bo;
  bo.batch_size = batch_size;
  bo.shuffle = false;
  // Read in one pass (a streamed source decodes only the task's records).
  auto records = data::ReadIntoMemory(source, task.begin, task.end);
  if (!records.ok()) return records.status().WithPrefix(TaskRangeName(task));
  data::Batcher batcher(**records, 0, (*records)->num_records(), bo);
  EDL_ASSIGN_OR_RETURN(auto metrics, cm.MakeMetrics());
  std::vector<tensor::Tensor> predictions;
  nn::NoGradGuard no_grad;
  for (int64_t b = 0; b < batcher.num_batches(); ++b) {
    auto batch = batcher.Batch(b);
    if (!batch.ok()) return batch.status().WithPrefix(TaskRangeName(task));
    std::vector<nn::Var> out = cm.model->Forward(ModelInputs(*batch, cm), /*training=*/false);
    report->samples += batch->size();
    const tensor::Tensor& y = out[0].value();
    if (task.type == TaskType::kPrediction) {
      // Predictions go on the wire: host copies.
      predictions.push_back(y.Reshape({y.dim(0), y.dim(0) ? y.numel() / y.dim(0) : 0})
                                .On(tensor::Device::kCPU));
      continue;
    }
    EDL_RETURN_IF_ERROR(CheckBatch(batch->labels, y, cm, metrics, TaskRangeName(task)));
    nn::Var loss = cm.loss->Compute(out[0], batch->labels);
    report->loss_sum += static_cast<double>(loss.value().item()) *
                        static_cast<double>(batch->size());
    if (!metrics.empty()) {
      tensor::Tensor pred = cm.ForMetrics(y);
      for (auto& m : metrics) m->Update(batch->labels, pred);
    }
  }
  for (auto& m : metrics) report->metrics.push_back({m->name(), m->State()});
  if (!predictions.empty()) report->predictions = tensor::Concat(predictions, 0);
  return Status::Ok();
}

}  // namespace edl::roles::worker
