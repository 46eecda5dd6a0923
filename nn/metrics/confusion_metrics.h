// Metrics from confusion counts at thresholds, as Keras' (tf.keras.metrics).
// Inputs are flattened; a label is positive when non-zero, a prediction when
// y_pred > threshold. y_true and y_pred have the same number of elements.
//
//   Precision  tp / (tp + fp) at one threshold (0.5); state {tp, fp}
//   Recall     tp / (tp + fn) at one threshold (0.5); state {tp, fn}
//   Auc        area under the ROC curve from tp/fp/tn/fn at num_thresholds
//              thresholds: -1e-7, i / (num_thresholds - 1) for
//              i = 1..num_thresholds-2, 1 + 1e-7 (Keras' defaults), summed
//              with the trapezoid rule over (FPR, TPR) (Keras'
//              summation_method="interpolation" for curve="ROC").
//              State: tp[n], fp[n], tn[n], fn[n]. With from_logits,
//              sigmoid(y_pred) is used.
// Ratios with a zero denominator are 0 (tf.math.divide_no_nan).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/metrics/metric.h"

namespace edl::nn::metrics {

class Precision : public Metric {
 public:
  explicit Precision(std::string name = "precision", double threshold = 0.5)
      : Metric(std::move(name)), threshold_(threshold) {}
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  double Result() const override;
  std::vector<double> State() const override { return {tp_, fp_}; }
  Status Merge(const std::vector<double>& other_state) override;
  void Reset() override { tp_ = fp_ = 0; }
  std::unique_ptr<Metric> Clone() const override { return std::make_unique<Precision>(*this); }

 private:
  double threshold_;
  double tp_ = 0, fp_ = 0;
};

class Recall : public Metric {
 public:
  explicit Recall(std::string name = "recall", double threshold = 0.5)
      : Metric(std::move(name)), threshold_(threshold) {}
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  double Result() const override;
  std::vector<double> State() const override { return {tp_, fn_}; }
  Status Merge(const std::vector<double>& other_state) override;
  void Reset() override { tp_ = fn_ = 0; }
  std::unique_ptr<Metric> Clone() const override { return std::make_unique<Recall>(*this); }

 private:
  double threshold_;
  double tp_ = 0, fn_ = 0;
};

class Auc : public Metric {
 public:
  // REQUIRES: num_thresholds > 1.
  explicit Auc(std::string name = "auc", int num_thresholds = 200, bool from_logits = false);
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  double Result() const override;
  std::vector<double> State() const override;
  Status Merge(const std::vector<double>& other_state) override;
  void Reset() override;
  std::unique_ptr<Metric> Clone() const override { return std::make_unique<Auc>(*this); }

  const std::vector<float>& thresholds() const { return thresholds_; }

 private:
  std::vector<float> thresholds_;
  bool from_logits_;
  std::vector<double> tp_, fp_, tn_, fn_;
};

}  // namespace edl::nn::metrics
