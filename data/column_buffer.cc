#include "data/column_buffer.h"

#include <algorithm>
#include <numeric>

namespace edl::data {

void ColumnBuffer::Clear() {
  numeric.clear();
  ids.clear();
  int_labels.clear();
  float_labels.clear();
  size = 0;
}

Examples ColumnBuffer::Gather(const ColumnLayout& layout, const int64_t* indices, int64_t n) const {
  Examples out;
  const int64_t m = layout.num_numeric;
  if (m > 0) {
    // Per record [m], or the first input's shape (an image's [h, w, c]).
    tensor::Shape shape = {n, m};
    if (!layout.inputs.empty() && tensor::NumElements(layout.inputs[0].shape) == m) {
      shape = {n};
      shape.insert(shape.end(), layout.inputs[0].shape.begin(), layout.inputs[0].shape.end());
    }
    tensor::Tensor x = tensor::Tensor::Empty(shape, tensor::DType::kFloat32);
    float* dst = x.f32();
    for (int64_t r = 0; r < n; ++r) {
      std::copy_n(numeric.data() + indices[r] * m, m, dst + r * m);
    }
    out.inputs.push_back(std::move(x));
  }
  const int64_t k = layout.num_categorical;
  if (layout.concat_ids && k > 0) {
    tensor::Tensor x = tensor::Tensor::Empty({n, k}, tensor::DType::kInt64);
    int64_t* dst = x.i64();
    for (int64_t r = 0; r < n; ++r) std::copy_n(ids.data() + indices[r] * k, k, dst + r * k);
    out.inputs.push_back(std::move(x));
  } else {
    for (int64_t c = 0; c < k; ++c) {
      tensor::Tensor x = tensor::Tensor::Empty({n}, tensor::DType::kInt64);
      int64_t* dst = x.i64();
      for (int64_t r = 0; r < n; ++r) dst[r] = ids[indices[r] * k + c];
      out.inputs.push_back(std::move(x));
    }
  }
  if (!layout.has_labels) return out;
  if (layout.float_labels) {
    out.labels = tensor::Tensor::Empty({n}, tensor::DType::kFloat32);
    float* y = out.labels.f32();
    for (int64_t r = 0; r < n; ++r) y[r] = float_labels[indices[r]];
  } else {
    out.labels = tensor::Tensor::Empty({n}, tensor::DType::kInt64);
    int64_t* y = out.labels.i64();
    for (int64_t r = 0; r < n; ++r) y[r] = int_labels[indices[r]];
  }
  return out;
}

Examples ColumnBuffer::Slice(const ColumnLayout& layout, int64_t begin, int64_t end) const {
  std::vector<int64_t> indices(end - begin);
  std::iota(indices.begin(), indices.end(), begin);
  return Gather(layout, indices.data(), end - begin);
}

}  // namespace edl::data
