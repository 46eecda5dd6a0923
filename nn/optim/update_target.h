// UpdateTarget: the elements one optimizer update touches — a whole dense
// variable, or the rows of an embedding table named by unique ids — and
// ForEachSpan, which hands an elementwise kernel disjoint contiguous spans
// of it, in parallel (OpenMP) when there is enough work.
//
// Every optimizer's update is elementwise (each element reads only its own
// value, gradient and slot elements), so dense and sparse updates run the
// same kernel, and a sparse update equals the dense update restricted to
// the given rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace edl::nn::optim {

struct UpdateTarget {
  float* value = nullptr;       // the variable (or table), row-major
  const float* grad = nullptr;  // dense: numel; sparse: num_ids x row_size
  std::vector<float*> slots;    // one per slot, laid out like value
  int64_t numel = 0;            // elements of value
  // Sparse only (null for dense): unique row ids; grad row i is row ids[i].
  const int64_t* ids = nullptr;
  int64_t num_ids = 0;
  int64_t row_size = 0;
};

// Calls kernel(value_offset, grad_offset, n) for disjoint spans that cover
// the target: value/slot elements [value_offset, value_offset + n) go with
// grad elements [grad_offset, grad_offset + n). Spans may run concurrently.
template <typename Kernel>
void ForEachSpan(const UpdateTarget& t, const Kernel& kernel) {
  constexpr int64_t kChunk = int64_t{1} << 14;
  constexpr int64_t kParallelMin = int64_t{1} << 16;
  if (t.ids == nullptr) {
    const int64_t chunks = (t.numel + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (t.numel >= kParallelMin)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t begin = c * kChunk;
      kernel(begin, begin, std::min(kChunk, t.numel - begin));
    }
  } else {
    const int64_t work = t.num_ids * t.row_size;
#pragma omp parallel for schedule(static) if (work >= kParallelMin)
    for (int64_t i = 0; i < t.num_ids; ++i) {
      kernel(t.ids[i] * t.row_size, i * t.row_size, t.row_size);
    }
  }
}

}  // namespace edl::nn::optim
