#include "roles/local/evaluation.h"

#include <cstdio>

#include "data/batch_prefetcher.h"
#include "nn/autograd.h"
#include "nn/layers/augmentation.h"

namespace edl::roles {

std::string EvaluationResult::ToString(const std::string& prefix) const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%sloss %.4f", prefix.c_str(), loss);
  std::string s = buf;
  for (const auto& [name, value] : metrics) {
    std::snprintf(buf, sizeof buf, " %s%s %.4f", prefix.c_str(), name.c_str(), value);
    s += buf;
  }
  return s;
}

std::vector<tensor::Tensor> ModelInputs(const data::Examples& batch, const CompiledModel& cm,
                                        tensor::Device device) {
  std::vector<tensor::Tensor> inputs;
  const auto& want = cm.model->inputs();
  for (size_t i = 0; i < batch.inputs.size(); ++i) {
    tensor::Shape shape = want[i].shape;
    shape.insert(shape.begin(), batch.inputs[i].dim(0));
    inputs.push_back(batch.inputs[i].Reshape(shape).On(device));
  }
  return inputs;
}

std::vector<tensor::Tensor> ModelInputs(const data::Examples& batch, const CompiledModel& cm) {
  return ModelInputs(batch, cm, cm.device);
}

std::vector<uint64_t> AugmentationKeys(const data::Examples& batch, uint64_t seed, int64_t epoch) {
  std::vector<uint64_t> keys;
  if (batch.records.size() != static_cast<size_t>(batch.size())) return keys;
  keys.reserve(batch.records.size());
  for (int64_t r : batch.records) {
    if (r < 0) return {};  // a record of unknown index: draws from the model's generator
    keys.push_back(nn::layers::AugmentationKey(seed, epoch, r));
  }
  return keys;
}

Status CheckBatch(const tensor::Tensor& labels, const tensor::Tensor& output,
                  const CompiledModel& cm,
                  const std::vector<std::unique_ptr<nn::metrics::Metric>>& metrics,
                  const std::string& flag) {
  if (cm.loss) {
    Status s = cm.loss->Validate(labels, output);
    if (!s.ok()) return s.WithPrefix(flag);
  }
  for (const auto& m : metrics) {
    Status s = m->Validate(labels, output);
    if (!s.ok()) return s.WithPrefix(flag);
  }
  return Status::Ok();
}

Result<EvaluationResult> Evaluate(CompiledModel& cm, const data::Source& source,
                                  int64_t batch_size) {
  nn::NoGradGuard no_grad;
  EDL_ASSIGN_OR_RETURN(auto metrics, cm.MakeMetrics());
  data::BatchOptions bo;
  bo.batch_size = batch_size;
  // In record order through one cursor, a reader thread a few batches ahead.
  data::BatchPrefetcher batches(source, 0, source.num_records(), bo, data::kPrefetchBatches);
  EvaluationResult r;
  double loss_sum = 0;
  while (true) {
    EDL_ASSIGN_OR_RETURN(auto next, batches.Next());
    if (!next) break;
    const data::Examples& batch = *next;
    std::vector<nn::Var> out = cm.model->Forward(ModelInputs(batch, cm), false);
    EDL_RETURN_IF_ERROR(CheckBatch(batch.labels, out[0].value(), cm, metrics, source.name()));
    nn::Var loss = cm.loss->Compute(out[0], batch.labels);
    const int64_t n = batch.size();
    loss_sum += static_cast<double>(loss.value().item()) * static_cast<double>(n);
    r.samples += n;
    tensor::Tensor pred = cm.ForMetrics(out[0].value());
    for (auto& m : metrics) m->Update(batch.labels, pred);
  }
  r.loss = r.samples ? loss_sum / static_cast<double>(r.samples) : 0;
  for (auto& m : metrics) r.metrics.emplace_back(m->name(), m->Result());
  return r;
}

}  // namespace edl::roles
