// PredictionCollector: gathers the outputs of prediction tasks (any order,
// any worker) and assembles them in record order, for the master to write as
// CSV (roles/prediction.h's format) when the job ends.
//
// Not thread-safe (MasterCore guards it).
#pragma once

#include <cstdint>
#include <map>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::roles::master {

class PredictionCollector {
 public:
  explicit PredictionCollector(int64_t records) : records_(records) {}

  // Outputs of records [begin, end): a tensor of end - begin rows, the same
  // columns and dtype as the others. InvalidArgument naming the range
  // otherwise (nothing is kept). A range received twice keeps the first.
  Status Add(int64_t begin, int64_t end, const tensor::Tensor& predictions);

  bool complete() const { return received_ == records_; }
  int64_t records_received() const { return received_; }

  // All outputs in record order: [records, ...]. FailedPrecondition while
  // incomplete or when there is no prediction data.
  Result<tensor::Tensor> Assemble() const;

 private:
  int64_t records_;
  int64_t received_ = 0;
  std::map<int64_t, tensor::Tensor> parts_;  // by begin
};

}  // namespace edl::roles::master
