// Keras losses. Compute() returns a scalar Var: the per-sample losses
// averaged over the batch (Keras' default SUM_OVER_BATCH_SIZE reduction, so
// for outputs [N, T, C] the mean over N*T). Each loss is one fused graph
// node whose backward is a precomputed gradient scaled by the seed.
//
// Labels: sparse categorical takes class ids int64 [rows] (or float32 [rows]
// / [rows, 1] holding ids); the other losses take float32 y_true with as
// many elements as y_pred. Labels outside [0, classes) are a caller's bug
// (data is validated before training). Labels may be on any device: callers
// pass the host batch's labels and a loss on device predictions uploads what
// it needs (the loss and its gradient are computed on y_pred's device).
//
// Thread-safety: Loss objects are immutable; Compute() may run concurrently.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "nn/autograd.h"

namespace edl::nn {

struct LossOptions {
  // Canonical snake_case: sparse_categorical_crossentropy,
  // categorical_crossentropy, binary_crossentropy, mean_squared_error,
  // mean_absolute_error, huber.
  std::string name;
  bool from_logits = false;
  float delta = 1.0f;           // huber
  float label_smoothing = 0.f;  // categorical and binary crossentropy
};

class Loss {
 public:
  virtual ~Loss();
  // Whether Compute may be called with these labels and predictions: an
  // InvalidArgument naming the loss when not (Compute treats a mismatch, or
  // a sparse label that is not a class id, as a bug). By default the two
  // must hold the same number of values.
  virtual Status Validate(const Tensor& y_true, const Tensor& y_pred) const;
  virtual Var Compute(const Var& y_pred, const Tensor& y_true) const = 0;
  // The canonical name (LossOptions::name).
  virtual std::string name() const = 0;
};

// The probability clip Keras applies (backend.epsilon()).
inline constexpr float kLossEpsilon = 1e-7f;

// InvalidArgument for an unknown name or an out-of-range option. Accepts
// Keras aliases ("mse", "MeanSquaredError", "huber_loss", ...) in `name`.
Result<std::unique_ptr<Loss>> MakeLoss(const LossOptions& options);

// Parses a loss as Keras serializes it: a JSON string naming it
// ("sparse_categorical_crossentropy", "mse", "SparseCategoricalCrossentropy")
// or {"class_name": "...", "config": {"from_logits": true, ...}}. Errors name
// `where` and the offending field.
Result<LossOptions> LossOptionsFromJson(const std::string& json_text, const std::string& where);
Result<std::unique_ptr<Loss>> LossFromJson(const std::string& json_text, const std::string& where);

}  // namespace edl::nn
