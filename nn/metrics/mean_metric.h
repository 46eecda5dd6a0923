// MeanMetric: metrics that are a mean of per-sample values (Keras' Mean and
// MeanMetricWrapper): state {total, count}, result total / count.
//
//   Mean                    the mean of every element of y_pred (use it for
//                           the loss: Update(Tensor(), loss) or Add(loss))
//   MeanSquaredError        mean over the last axis of (y_true - y_pred)^2
//   MeanAbsoluteError       mean over the last axis of |y_true - y_pred|
//
// For the error metrics y_pred is [..., K] (a rank-1 y_pred is [N, 1]: one
// sample per element) and y_true has as many elements; each row of K is one
// sample.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/metrics/metric.h"

namespace edl::nn::metrics {

class MeanMetric : public Metric {
 public:
  double Result() const override;
  std::vector<double> State() const override { return {total_, count_}; }
  Status Merge(const std::vector<double>& other_state) override;
  void Reset() override { total_ = count_ = 0; }

  // Adds samples whose values sum to `sum`.
  void AddSamples(double sum, double count) {
    total_ += sum;
    count_ += count;
  }

 protected:
  using Metric::Metric;

 private:
  double total_ = 0;
  double count_ = 0;
};

class Mean : public MeanMetric {
 public:
  explicit Mean(std::string name = "mean") : MeanMetric(std::move(name)) {}
  // Ignores y_true; adds every element of `values`.
  void Update(const Tensor& y_true, const Tensor& values) override;
  void Add(double value) { AddSamples(value, 1); }
  std::unique_ptr<Metric> Clone() const override { return std::make_unique<Mean>(*this); }
};

class MeanSquaredError : public MeanMetric {
 public:
  explicit MeanSquaredError(std::string name = "mean_squared_error")
      : MeanMetric(std::move(name)) {}
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  std::unique_ptr<Metric> Clone() const override {
    return std::make_unique<MeanSquaredError>(*this);
  }
};

class MeanAbsoluteError : public MeanMetric {
 public:
  explicit MeanAbsoluteError(std::string name = "mean_absolute_error")
      : MeanMetric(std::move(name)) {}
  void Update(const Tensor& y_true, const Tensor& y_pred) override;
  std::unique_ptr<Metric> Clone() const override {
    return std::make_unique<MeanAbsoluteError>(*this);
  }
};

// The per-sample layout shared by row-wise metrics: y_pred's last dimension
// (1 for rank <= 1) and the number of rows. REQUIRES y_true.numel() ==
// y_pred.numel().
struct SampleRows {
  int64_t rows;
  int64_t width;
};
SampleRows RowsOf(const Tensor& y_true, const Tensor& y_pred);

}  // namespace edl::nn::metrics
