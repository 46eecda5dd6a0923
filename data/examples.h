// Examples: a batch of records as tensors, the unit every Source returns.
// inputs are in model input order: float32 for numeric and image inputs,
// int64 for categorical ids; all have the record count as first dimension.
// labels are int64 [N] (classes) or float32 [N] (regression), undefined for
// unlabeled (prediction) data. A plain value; tensors share no storage with
// the source they came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace edl::data {

struct Examples {
  std::vector<tensor::Tensor> inputs;
  tensor::Tensor labels;
  // Each row's record index in its data set, where known (empty if not;
  // -1 for a row whose index is unknown among known ones):
  // set by the batchers (data/batcher.h, data/batch_prefetcher.h) and by
  // sources that leave records out (--skip_corrupt_records); what seeds a
  // record's random augmentation (nn/layers/augmentation.h).
  std::vector<int64_t> records;

  int64_t size() const {
    if (!inputs.empty()) return inputs[0].dim(0);
    return labels.defined() ? labels.dim(0) : 0;
  }
};

// Sets e.records to `indices` when they are unknown and the rows are as
// many as the indices (none were left out).
inline void LabelRecords(Examples& e, std::vector<int64_t> indices) {
  if (e.records.empty() && e.size() == static_cast<int64_t>(indices.size())) {
    e.records = std::move(indices);
  }
}

// Describes one model input a source produces.
struct InputInfo {
  std::string name;     // "image", "numeric", a column name, "categorical"
  tensor::DType dtype;  // kFloat32 or kInt64
  tensor::Shape shape;  // per record, e.g. [28, 28] or [4]; [] for one id
  int64_t num_ids = 0;  // int64 inputs: ids are in [0, num_ids)
};

}  // namespace edl::data
