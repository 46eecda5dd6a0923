#include "nn/metrics/accuracy.h"

#include <vector>

namespace edl::nn::metrics {

namespace {

// Index of the first maximum of row[0..width).
int64_t ArgMax(const float* row, int64_t width) {
  int64_t best = 0;
  for (int64_t k = 1; k < width; ++k) {
    if (row[k] > row[best]) best = k;
  }
  return best;
}

}  // namespace

Status SparseCategoricalAccuracy::Validate(const Tensor& y_true, const Tensor& y_pred) const {
  const int64_t rows =
      y_pred.rank() >= 2 && y_pred.dim(-1) > 0 ? y_pred.numel() / y_pred.dim(-1) : -1;
  if (rows >= 0 && y_true.numel() == rows) return Status::Ok();
  return InvalidArgument("metric " + name() +
                         " needs one class id per row of class "
                         "scores, but the labels are " +
                         tensor::ShapeString(y_true.shape()) + " and the model's output " +
                         tensor::ShapeString(y_pred.shape()));
}

void SparseCategoricalAccuracy::Update(const Tensor& y_true, const Tensor& y_pred) {
  EDL_CHECK_GE(y_pred.rank(), 2) << "y_pred " << tensor::ShapeString(y_pred.shape());
  const int64_t width = y_pred.dim(-1);
  const int64_t rows = width == 0 ? 0 : y_pred.numel() / width;
  EDL_CHECK_EQ(y_true.numel(), rows) << "y_true " << tensor::ShapeString(y_true.shape())
                                     << " vs y_pred " << tensor::ShapeString(y_pred.shape());
  const std::vector<float> labels = y_true.ToVector();
  const float* p = y_pred.f32();
  double right = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double predicted = static_cast<double>(ArgMax(p + r * width, width));
    right += predicted == static_cast<double>(labels[r]) ? 1 : 0;
  }
  AddSamples(right, static_cast<double>(rows));
}

void CategoricalAccuracy::Update(const Tensor& y_true, const Tensor& y_pred) {
  const SampleRows shape = RowsOf(y_true, y_pred);
  const std::vector<float> t = y_true.ToVector();
  const float* p = y_pred.f32();
  double right = 0;
  for (int64_t r = 0; r < shape.rows; ++r) {
    const int64_t offset = r * shape.width;
    right += ArgMax(t.data() + offset, shape.width) == ArgMax(p + offset, shape.width) ? 1 : 0;
  }
  AddSamples(right, static_cast<double>(shape.rows));
}

void BinaryAccuracy::Update(const Tensor& y_true, const Tensor& y_pred) {
  const SampleRows shape = RowsOf(y_true, y_pred);
  const std::vector<float> t = y_true.ToVector();
  const float* p = y_pred.f32();
  const float threshold = static_cast<float>(threshold_);
  double total = 0;
  for (int64_t r = 0; r < shape.rows; ++r) {
    int64_t right = 0;
    for (int64_t k = 0; k < shape.width; ++k) {
      const int64_t i = r * shape.width + k;
      const float predicted = p[i] > threshold ? 1.f : 0.f;
      right += predicted == t[i] ? 1 : 0;
    }
    total += static_cast<double>(right) / static_cast<double>(shape.width);
  }
  AddSamples(total, static_cast<double>(shape.rows));
}

}  // namespace edl::nn::metrics
