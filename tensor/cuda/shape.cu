// Layout and indexing kernels: dtype casts, 2-D transposes (conv kernels
// between Keras' HWIO and cuDNN's OHWI, RNN gate blocks, images between NHWC
// and NCHW), axis permutations, NHWC padding and cropping
// (asymmetric convolution padding), embedding gather and scatter-add.
#include <algorithm>
#include <cstdint>

#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {
namespace {

// The values of edl::tensor::DType.
enum DTypeCode { kFloat32 = 0, kInt64 = 1, kUInt8 = 2 };

template <typename From, typename To>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  EDL_GRID_STRIDE(i, n) { y[i] = static_cast<To>(x[i]); }
}

template <typename From>
void CastFrom(const From* x, void* y, int to, int64_t n, cudaStream_t stream) {
  switch (to) {
    case kFloat32:
      CastKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, static_cast<float*>(y), n);
      break;
    case kInt64:
      CastKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, static_cast<int64_t*>(y), n);
      break;
    case kUInt8:
      CastKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, static_cast<uint8_t*>(y), n);
      break;
    default: EDL_CHECK(false) << "Cast to dtype " << to;
  }
  EDL_CUDA_LAUNCHED();
}

constexpr int kTile = 32;

// Shared-memory tiled transpose: x [rows, cols] (row stride x_ld) ->
// y [cols, rows] (row stride y_ld), for each of gridDim.z matrices (batch
// element z at x + z * x_batch, y + z * y_batch).
__global__ void TransposeKernel(const float* x, int64_t x_ld, int64_t x_batch, float* y,
                                int64_t y_ld, int64_t y_batch, int64_t rows, int64_t cols) {
  __shared__ float tile[kTile][kTile + 1];
  x += static_cast<int64_t>(blockIdx.z) * x_batch;
  y += static_cast<int64_t>(blockIdx.z) * y_batch;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
    const int64_t r = static_cast<int64_t>(blockIdx.y) * kTile + k;
    if (r < rows && c < cols) tile[k][threadIdx.x] = x[r * x_ld + c];
  }
  __syncthreads();
  const int64_t r = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.x;
  for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
    const int64_t cc = static_cast<int64_t>(blockIdx.x) * kTile + k;
    if (r < rows && cc < cols) y[cc * y_ld + r] = tile[threadIdx.x][k];
  }
}

void LaunchTranspose(const float* x, int64_t x_ld, int64_t x_batch, float* y, int64_t y_ld,
                     int64_t y_batch, int64_t batch, int64_t rows, int64_t cols,
                     cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  EDL_CHECK(col_tiles < (int64_t{1} << 31) && row_tiles <= 65535)
      << "transpose of " << rows << " x " << cols << " too large";
  constexpr int64_t kMaxZ = 65535;
  for (int64_t b = 0; b < batch; b += kMaxZ) {
    dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(row_tiles),
              static_cast<unsigned>(std::min(kMaxZ, batch - b)));
    TransposeKernel<<<grid, dim3(kTile, 8), 0, stream>>>(
        x + b * x_batch, x_ld, x_batch, y + b * y_batch, y_ld, y_batch, rows, cols);
    EDL_CUDA_LAUNCHED();
  }
}

// y[i] = x at y's coordinates of i, each weighted by x_strides (the x
// stride of the axis that y's axis came from).
__global__ void PermuteKernel(const float* x, Dims x_strides, float* y, Dims y_dims, int rank,
                              int64_t n) {
  EDL_GRID_STRIDE(i, n) {
    int64_t rest = i, offset = 0;
    for (int k = rank - 1; k >= 0; --k) {
      offset += (rest % y_dims.v[k]) * x_strides.v[k];
      rest /= y_dims.v[k];
    }
    y[i] = x[offset];
  }
}

// Walks the padded image; `pad` copies x into it (zeros outside), else the
// interior of y is copied back into x.
template <bool kPad>
__global__ void PadKernel(float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c,
                          int64_t top, int64_t left, int64_t ph, int64_t pw) {
  EDL_GRID_STRIDE(i, n * ph * pw * c) {
    int64_t rest = i;
    const int64_t ch = rest % c;
    rest /= c;
    const int64_t wi = rest % pw - left;
    rest /= pw;
    const int64_t hi = rest % ph - top;
    const int64_t b = rest / ph;
    const bool inside = hi >= 0 && hi < h && wi >= 0 && wi < w;
    const int64_t xi = ((b * h + hi) * w + wi) * c + ch;
    if (kPad) {
      y[i] = inside ? x[xi] : 0.f;
    } else if (inside) {
      x[xi] = y[i];
    }
  }
}

__global__ void GatherKernel(const float* table, int64_t v, int64_t d, const int64_t* ids,
                             int64_t n, float* y) {
  EDL_GRID_STRIDE(i, n * d) {
    const int64_t row = i / d, col = i % d;
    const int64_t id = ids[row];
    y[i] = (id >= 0 && id < v) ? table[id * d + col] : 0.f;
  }
}

__global__ void ScatterAddKernel(float* table, int64_t v, int64_t d, const int64_t* ids,
                                 const float* values, int64_t n, float alpha) {
  EDL_GRID_STRIDE(i, n * d) {
    const int64_t row = i / d, col = i % d;
    const int64_t id = ids[row];
    if (id >= 0 && id < v) atomicAdd(&table[id * d + col], alpha * values[i]);
  }
}

}  // namespace

void Cast(const void* x, int from_dtype, void* y, int to_dtype, int64_t n, cudaStream_t stream) {
  switch (from_dtype) {
    case kFloat32: CastFrom(static_cast<const float*>(x), y, to_dtype, n, stream); return;
    case kInt64: CastFrom(static_cast<const int64_t*>(x), y, to_dtype, n, stream); return;
    case kUInt8: CastFrom(static_cast<const uint8_t*>(x), y, to_dtype, n, stream); return;
  }
  EDL_CHECK(false) << "Cast from dtype " << from_dtype;
}

void Transpose2D(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  TransposeStrided(x, cols, y, rows, rows, cols, stream);
}

void TransposeStrided(const float* x, int64_t x_ld, float* y, int64_t y_ld, int64_t rows,
                      int64_t cols, cudaStream_t stream) {
  LaunchTranspose(x, x_ld, 0, y, y_ld, 0, 1, rows, cols, stream);
}

void BatchedTranspose(const float* x, float* y, int64_t batch, int64_t rows, int64_t cols,
                      cudaStream_t stream) {
  LaunchTranspose(x, cols, rows * cols, y, rows, rows * cols, batch, rows, cols, stream);
}

void Permute(const float* x, const Dims& x_strides, float* y, const Dims& y_dims, int rank,
             int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  PermuteKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, x_strides, y, y_dims, rank, n);
  EDL_CUDA_LAUNCHED();
}

void PadImage(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
              int64_t bottom, int64_t left, int64_t right, cudaStream_t stream) {
  const int64_t ph = h + top + bottom, pw = w + left + right;
  const int64_t total = n * ph * pw * c;
  if (total == 0) return;
  PadKernel<true><<<BlocksFor(total), kThreads, 0, stream>>>(const_cast<float*>(x), y, n, h, w, c,
                                                             top, left, ph, pw);
  EDL_CUDA_LAUNCHED();
}

void CropImage(const float* y, float* x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
               int64_t bottom, int64_t left, int64_t right, cudaStream_t stream) {
  const int64_t ph = h + top + bottom, pw = w + left + right;
  const int64_t total = n * ph * pw * c;
  if (total == 0) return;
  PadKernel<false><<<BlocksFor(total), kThreads, 0, stream>>>(x, const_cast<float*>(y), n, h, w, c,
                                                              top, left, ph, pw);
  EDL_CUDA_LAUNCHED();
}

void Gather(const float* table, int64_t v, int64_t d, const int64_t* ids, int64_t n, float* y,
            cudaStream_t stream) {
  if (n * d == 0) return;
  GatherKernel<<<BlocksFor(n * d), kThreads, 0, stream>>>(table, v, d, ids, n, y);
  EDL_CUDA_LAUNCHED();
}

void ScatterAdd(float* table, int64_t v, int64_t d, const int64_t* ids, const float* values,
                int64_t n, float alpha, cudaStream_t stream) {
  if (n * d == 0) return;
  ScatterAddKernel<<<BlocksFor(n * d), kThreads, 0, stream>>>(table, v, d, ids, values, n, alpha);
  EDL_CUDA_LAUNCHED();
}

}  // namespace edl::tensor::cuda
