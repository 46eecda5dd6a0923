// Helpers shared by the CUDA kernels and their callers: launch geometry for
// grid-stride loops and the error checks (a failed CUDA call is a bug or a
// lost device: it aborts, like EDL_CHECK).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "base/check.h"

#define EDL_CUDA_CHECK(expr)                                                                     \
  do {                                                                                           \
    cudaError_t edl_cuda_rc_ = (expr);                                                           \
    EDL_CHECK(edl_cuda_rc_ == cudaSuccess) << #expr << ": " << cudaGetErrorString(edl_cuda_rc_); \
  } while (0)

// After a kernel launch: reports a bad launch configuration at once.
#define EDL_CUDA_LAUNCHED() EDL_CUDA_CHECK(cudaGetLastError())

namespace edl::tensor::cuda {

inline constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements.
inline unsigned BlocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{1} << 20));
}

#ifdef __CUDACC__
#define EDL_GRID_STRIDE(i, n)                                                            \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
#endif

}  // namespace edl::tensor::cuda
