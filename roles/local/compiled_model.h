// CompiledModel: everything a job needs to train, evaluate or predict with a
// model (like Keras' model.compile): the spec, the built model, its loss,
// optimizer, metrics and input spec, optionally restored from a checkpoint.
// Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/input_spec.h"
#include "nn/keras/model.h"
#include "nn/keras/model_spec.h"
#include "nn/losses.h"
#include "nn/metrics/metric.h"
#include "nn/optim/optimizer.h"
#include "roles/job_options.h"
#include "roles/local/checkpoint.h"

namespace edl::roles {

struct CompiledModel {
  nn::keras::ModelSpec spec;
  std::unique_ptr<nn::keras::Model> model;
  std::unique_ptr<nn::Loss> loss;
  std::unique_ptr<nn::optim::Optimizer> optimizer;
  data::InputSpec input;
  // How predictions become what metrics expect (probabilities): the loss is
  // from_logits, so metrics see softmax/sigmoid of the model's output.
  enum class OutputTransform { kNone, kSoftmax, kSigmoid } transform = OutputTransform::kNone;
  int64_t epoch = 0;  // epochs completed (from a checkpoint)
  // Where the model's parameters live (ModelOptions::device, resolved).
  tensor::Device device = tensor::Device::kCPU;

  // Fresh metric objects for one evaluation or epoch.
  Result<std::vector<std::unique_ptr<nn::metrics::Metric>>> MakeMetrics() const;
  // The model's output as metrics expect it, on the host (metrics read it
  // there; the transform runs on the output's device first).
  tensor::Tensor ForMetrics(const tensor::Tensor& output) const;
  // The full spec as one JSON document (for checkpoints and exports).
  std::string SpecJson() const;
  // A checkpoint of the current weights and optimizer state, as host copies.
  Checkpoint MakeCheckpoint() const;
};

// Loads the spec (options.model_def, or the checkpoint's own spec when only
// checkpoint_dir_for_init is given), applies flag overrides, builds the model
// and restores the checkpoint if any, then moves the parameters to
// options.device (ChooseDevice). Errors name the flag or file.
Result<CompiledModel> CompileModel(const ModelOptions& options);

// Restores weights (by name, shapes checked), the step count and, when
// `with_optimizer_state`, the optimizer's slot variables.
Status RestoreCheckpoint(const Checkpoint& checkpoint, CompiledModel& cm,
                         bool with_optimizer_state);

}  // namespace edl::roles
