// Random tensors made on the device: dropout masks from the counter-based
// generator of tensor/dropout_mask.h, element for element what the host
// loops make.
#include <cstdint>

#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"
#include "tensor/dropout_mask.h"

namespace edl::tensor::cuda {
namespace {

__global__ void DropoutMaskKernel(float* mask, int64_t n, uint64_t seed, uint64_t drop_below,
                                  float keep_scale) {
  EDL_GRID_STRIDE(i, n) {
    mask[i] = DropoutMaskAt(seed, static_cast<uint64_t>(i), drop_below, keep_scale);
  }
}

}  // namespace

void DropoutMask(float* mask, int64_t n, uint64_t seed, uint64_t drop_below, float keep_scale,
                 cudaStream_t stream) {
  DropoutMaskKernel<<<BlocksFor(n), kThreads, 0, stream>>>(mask, n, seed, drop_below, keep_scale);
  EDL_CUDA_LAUNCHED();
}

}  // namespace edl::tensor::cuda
