#include "roles/master/prediction_collector.h"

#include <string>

namespace edl::roles::master {

namespace {
std::string Range(int64_t begin, int64_t end) {
  return "prediction data records [" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}
}  // namespace

Status PredictionCollector::Add(int64_t begin, int64_t end, const tensor::Tensor& predictions) {
  if (begin < 0 || end > records_ || begin >= end) {
    return InvalidArgument(Range(begin, end) + ": outside the data set of " +
                           std::to_string(records_) + " records");
  }
  if (!predictions.defined() || predictions.rank() < 1 || predictions.dim(0) != end - begin) {
    return InvalidArgument(Range(begin, end) + ": expected predictions of " +
                           std::to_string(end - begin) + " rows, got " +
                           (predictions.defined()
                                ? "shape " + tensor::ShapeString(predictions.shape())
                                : std::string("none")));
  }
  const tensor::Shape row(predictions.shape().begin() + 1, predictions.shape().end());
  if (have_first_ && (row != row_shape_ || predictions.dtype() != dtype_)) {
    std::string shown = "[rows";
    for (int64_t d : row_shape_) shown += ", " + std::to_string(d);
    shown += "]";
    return InvalidArgument(Range(begin, end) + ": predictions of shape " +
                           tensor::ShapeString(predictions.shape()) + " " +
                           tensor::DTypeName(predictions.dtype()) + " do not match the others' " +
                           shown + " " + tensor::DTypeName(dtype_));
  }
  if (begins_.count(begin)) return Status::Ok();
  if (sink_) EDL_RETURN_IF_ERROR(sink_(begin, end, predictions));
  if (!have_first_) {
    row_shape_ = row;
    dtype_ = predictions.dtype();
    have_first_ = true;
  }
  begins_.insert(begin);
  received_ += end - begin;
  return Status::Ok();
}

Status PredictionCollector::CheckComplete() const {
  if (records_ == 0) return FailedPrecondition("the job has no prediction data");
  if (!complete()) {
    return FailedPrecondition("predictions for " + std::to_string(received_) + " of " +
                              std::to_string(records_) + " records received so far");
  }
  return Status::Ok();
}

}  // namespace edl::roles::master
