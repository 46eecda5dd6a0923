// Accuracy metrics, as Keras' (tf.keras.metrics), each a mean over samples:
//
//   SparseCategoricalAccuracy  y_true: class ids [N] or [N, 1] (int64 or
//                              float); y_pred: [N, C] scores. A sample is
//                              right when argmax(y_pred) == y_true (ties go
//                              to the lowest index, as tf.argmax).
//   CategoricalAccuracy        y_true, y_pred: [N, C]; right when
//                              argmax(y_true) == argmax(y_pred).
//   BinaryAccuracy             y_true, y_pred: same number of elements;
//                              per sample (row of y_pred's last axis) the
//                              fraction of elements with
//                              (y_pred > threshold) == y_true.
#pragma once

#include <memory>
#include <string>

#include "nn/metrics/mean_metric.h"

namespace edl::nn::metrics {

class SparseCategoricalAccuracy : public MeanMetric {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy")
      : MeanMetric(std::move(name)) {}
  Status Validate(const Tensor& y_true, const Tensor& y_pred) const override;
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  std::unique_ptr<Metric> Clone() const override {
    return std::make_unique<SparseCategoricalAccuracy>(*this);
  }
};

class CategoricalAccuracy : public MeanMetric {
 public:
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy")
      : MeanMetric(std::move(name)) {}
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  std::unique_ptr<Metric> Clone() const override {
    return std::make_unique<CategoricalAccuracy>(*this);
  }
};

class BinaryAccuracy : public MeanMetric {
 public:
  explicit BinaryAccuracy(std::string name = "binary_accuracy", double threshold = 0.5)
      : MeanMetric(std::move(name)), threshold_(threshold) {}
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  std::unique_ptr<Metric> Clone() const override { return std::make_unique<BinaryAccuracy>(*this); }

 private:
  double threshold_;
};

}  // namespace edl::nn::metrics
