// Metric: a streaming evaluation metric whose state is a vector of numbers
// that can be added up. Workers Update() on their batches and send State();
// the master Merge()s the states and reads Result(), which equals the
// metric over all batches together.
//
// Inputs are probabilities (not logits) unless a metric says otherwise
// (AUC has Keras' from_logits option). y_true may be float32 or int64.
// REQUIRES for Update: shapes that agree as each metric documents (the
// model builder checks the data against the model; a mismatch here is a bug).
//
// Not thread-safe: one metric object per thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::nn::metrics {

using tensor::Tensor;

class Metric {
 public:
  virtual ~Metric() = default;

  // The name Keras would log ("accuracy", "auc", "val_" is the caller's).
  const std::string& name() const { return name_; }

  // Whether Update may be called with tensors of these shapes: an
  // InvalidArgument naming the metric when not (Update treats a mismatch as
  // a bug). By default the two must hold the same number of values.
  virtual Status Validate(const Tensor& y_true, const Tensor& y_pred) const;
  virtual void Update(const Tensor& y_true, const Tensor& y_pred) = 0;
  // The metric over everything updated and merged so far (0 when empty).
  virtual double Result() const = 0;
  // The accumulated state; its length depends only on the configuration.
  virtual std::vector<double> State() const = 0;
  // Adds another instance's State() (same configuration) to this one.
  // Fails, changing nothing, when the length does not match.
  virtual Status Merge(const std::vector<double>& other_state) = 0;
  virtual void Reset() = 0;
  // A copy with the same configuration and state.
  virtual std::unique_ptr<Metric> Clone() const = 0;

 protected:
  explicit Metric(std::string name) : name_(std::move(name)) {}

  // InvalidArgument for a state of the wrong length.
  Status StateSizeError(size_t expected, size_t got) const;

 private:
  std::string name_;
};

}  // namespace edl::nn::metrics
