#include "nn/metrics/metric.h"

namespace edl::nn::metrics {

Status Metric::StateSizeError(size_t expected, size_t got) const {
  return InvalidArgument("metric \"" + name_ + "\": cannot merge a state of " +
                         std::to_string(got) + " values into one of " + std::to_string(expected));
}

Status Metric::Validate(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_true.numel() == y_pred.numel()) return Status::Ok();
  return InvalidArgument("metric " + name() +
                         " needs one prediction per label value, but "
                         "the labels are " +
                         tensor::ShapeString(y_true.shape()) + " and the model's output " +
                         tensor::ShapeString(y_pred.shape()));
}

}  // namespace edl::nn::metrics
