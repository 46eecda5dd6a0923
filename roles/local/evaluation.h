// Evaluation: the model's mean loss and metrics over a data source, computed
// without recording gradients and with inference behaviour (no dropout,
// batch norm on its moving statistics).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "data/source.h"
#include "roles/local/compiled_model.h"

namespace edl::roles {

struct EvaluationResult {
  int64_t samples = 0;
  double loss = 0;
  std::vector<std::pair<std::string, double>> metrics;

  // "loss 0.3121 accuracy 0.8873" with each name prefixed by `prefix`.
  std::string ToString(const std::string& prefix = "") const;
};

// The batch's inputs reshaped to the model's declared input shapes (a CSV
// row of 784 numbers feeds a [28, 28] input), on `device` (uploaded when it
// is not the CPU); by default on the model's device, ready for Forward.
// Labels stay on the host: metrics and CheckBatch read them there, and a
// loss on device predictions uploads what it needs (nn/losses.h).
std::vector<tensor::Tensor> ModelInputs(const data::Examples& batch, const CompiledModel& cm,
                                        tensor::Device device);
std::vector<tensor::Tensor> ModelInputs(const data::Examples& batch, const CompiledModel& cm);

// One augmentation key per record of a training batch (CallContext::
// record_keys) from the job's seed, the epoch and the records' indices;
// empty when the batch does not know its records (then keys are drawn).
std::vector<uint64_t> AugmentationKeys(const data::Examples& batch, uint64_t seed, int64_t epoch);

// Whether the loss and every metric accept these labels and the model's
// output (shapes; sparse labels that are class ids). InvalidArgument naming
// `flag` and what does not fit otherwise (the loss and metrics treat a
// mismatch as a bug).
Status CheckBatch(const tensor::Tensor& labels, const tensor::Tensor& output,
                  const CompiledModel& cm,
                  const std::vector<std::unique_ptr<nn::metrics::Metric>>& metrics,
                  const std::string& flag);

Result<EvaluationResult> Evaluate(CompiledModel& cm, const data::Source& source,
                                  int64_t batch_size);

}  // namespace edl::roles
