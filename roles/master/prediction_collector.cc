#include "roles/master/prediction_collector.h"

#include <string>
#include <vector>

#include "tensor/ops.h"

namespace edl::roles::master {

namespace {
std::string Range(int64_t begin, int64_t end) {
  return "prediction data records [" + std::to_string(begin) + ", " +
         std::to_string(end) + ")";
}
}  // namespace

Status PredictionCollector::Add(int64_t begin, int64_t end,
                                const tensor::Tensor& predictions) {
  if (begin < 0 || end > records_ || begin >= end) {
    return InvalidArgument(Range(begin, end) + ": outside the data set of " +
                           std::to_string(records_) + " records");
  }
  if (!predictions.defined() || predictions.rank() < 1 ||
      predictions.dim(0) != end - begin) {
    return InvalidArgument(
        Range(begin, end) + ": expected predictions of " +
        std::to_string(end - begin) + " rows, got " +
        (predictions.defined()
             ? "shape " + tensor::ShapeString(predictions.shape())
             : std::string("none")));
  }
  if (!parts_.empty()) {
    const tensor::Tensor& first = parts_.begin()->second;
    tensor::Shape a(first.shape().begin() + 1, first.shape().end());
    tensor::Shape b(predictions.shape().begin() + 1, predictions.shape().end());
    if (a != b || first.dtype() != predictions.dtype()) {
      return InvalidArgument(Range(begin, end) + ": predictions of shape " +
                             tensor::ShapeString(predictions.shape()) + " " +
                             tensor::DTypeName(predictions.dtype()) +
                             " do not match the others' " +
                             tensor::ShapeString(first.shape()) + " " +
                             tensor::DTypeName(first.dtype()));
    }
  }
  if (parts_.emplace(begin, predictions).second) received_ += end - begin;
  return Status::Ok();
}

Result<tensor::Tensor> PredictionCollector::Assemble() const {
  if (records_ == 0)
    return FailedPrecondition("the job has no prediction data");
  if (!complete()) {
    return FailedPrecondition("predictions for " + std::to_string(received_) +
                              " of " + std::to_string(records_) +
                              " records received so far");
  }
  std::vector<tensor::Tensor> parts;
  parts.reserve(parts_.size());
  for (const auto& [begin, t] : parts_) parts.push_back(t);
  if (parts.size() == 1) return parts[0].Clone();
  return tensor::Concat(parts, 0);
}

}  // namespace edl::roles::master
