#include "nn/metrics/mean_metric.h"

#include <cmath>

namespace edl::nn::metrics {

double MeanMetric::Result() const { return count_ == 0 ? 0.0 : total_ / count_; }

Status MeanMetric::Merge(const std::vector<double>& other_state) {
  if (other_state.size() != 2) return StateSizeError(2, other_state.size());
  total_ += other_state[0];
  count_ += other_state[1];
  return Status::Ok();
}

SampleRows RowsOf(const Tensor& y_true, const Tensor& y_pred) {
  EDL_CHECK_EQ(y_true.numel(), y_pred.numel())
      << "y_true " << tensor::ShapeString(y_true.shape()) << " vs y_pred "
      << tensor::ShapeString(y_pred.shape());
  const int64_t width = y_pred.rank() <= 1 ? 1 : y_pred.dim(-1);
  return {width == 0 ? 0 : y_pred.numel() / width, width};
}

void Mean::Update(const Tensor& /*y_true*/, const Tensor& values) {
  const std::vector<float> v = values.ToVector();
  double sum = 0;
  for (float x : v) sum += x;
  AddSamples(sum, static_cast<double>(v.size()));
}

namespace {

template <typename Fn>
double SumOfRowMeans(const Tensor& y_true, const Tensor& y_pred, SampleRows shape, Fn per_element) {
  const std::vector<float> t = y_true.ToVector();
  const float* p = y_pred.f32();
  double total = 0;
  for (int64_t r = 0; r < shape.rows; ++r) {
    double row = 0;
    for (int64_t k = 0; k < shape.width; ++k) {
      const int64_t i = r * shape.width + k;
      row += per_element(static_cast<double>(t[i]), static_cast<double>(p[i]));
    }
    total += row / static_cast<double>(shape.width);
  }
  return total;
}

}  // namespace

void MeanSquaredError::Update(const Tensor& y_true, const Tensor& y_pred) {
  const SampleRows shape = RowsOf(y_true, y_pred);
  AddSamples(
      SumOfRowMeans(y_true, y_pred, shape, [](double t, double p) { return (t - p) * (t - p); }),
      static_cast<double>(shape.rows));
}

void MeanAbsoluteError::Update(const Tensor& y_true, const Tensor& y_pred) {
  const SampleRows shape = RowsOf(y_true, y_pred);
  AddSamples(
      SumOfRowMeans(y_true, y_pred, shape, [](double t, double p) { return std::fabs(t - p); }),
      static_cast<double>(shape.rows));
}

}  // namespace edl::nn::metrics
