// PredictionCollector: accepts the outputs of prediction tasks (any order,
// any worker), checks each against the data set and the parts before it,
// and hands it to a sink (the master writes it as a part file,
// roles/job/prediction_parts.h), so the master holds no predicted rows: only
// which ranges arrived, whatever the data set's size.
//
// Not thread-safe (MasterCore guards it).
#pragma once

#include <cstdint>
#include <functional>
#include <set>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::roles::protocol {
class Reader;
class Writer;
}  // namespace edl::roles::protocol

namespace edl::roles::master {

// Keeps the outputs of records [begin, end): `rows` has end - begin rows.
using PredictionSink =
    std::function<Status(int64_t begin, int64_t end, const tensor::Tensor& rows)>;

class PredictionCollector {
 public:
  // An unset sink counts the outputs and drops them.
  PredictionCollector(int64_t records, PredictionSink sink)
      : records_(records), sink_(std::move(sink)) {}

  // Outputs of records [begin, end): a tensor of end - begin rows, the same
  // columns and dtype as the others. InvalidArgument naming the range
  // otherwise, or the sink's error (nothing is counted). A range received
  // twice is ignored after the first.
  Status Add(int64_t begin, int64_t end, const tensor::Tensor& predictions);

  bool complete() const { return received_ == records_; }
  int64_t records_received() const { return received_; }

  // OK once every record's outputs arrived; FailedPrecondition saying how
  // many did, or that the job has no prediction data.
  Status CheckComplete() const;

  // Counts [begin, end) as received without its rows (replaying a report
  // whose rows the sink already kept); `columns`, zero rows of the outputs'
  // shape and dtype, sets what later parts must match if nothing has yet.
  void MarkReceived(int64_t begin, int64_t end, const tensor::Tensor& columns);
  // The durable state (roles/master/master_state.cc): the ranges received.
  void Save(protocol::Writer& w) const;
  void Load(protocol::Reader& r);

 private:
  int64_t records_;
  PredictionSink sink_;
  int64_t received_ = 0;
  std::set<int64_t> begins_;  // ranges received
  tensor::Shape row_shape_;   // of the first part, without its rows
  tensor::DType dtype_{};
  bool have_first_ = false;
};

}  // namespace edl::roles::master
