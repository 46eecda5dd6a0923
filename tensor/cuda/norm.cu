// Batch and layer normalization over x viewed as [rows, c], and column sums
// (bias gradients). Statistics accumulate in double, as the reference does.
// References: Ioffe & Szegedy 2015 (batch norm), Ba et al. 2016 (layer norm);
// the backward formulas are those of tensor/reference/pool_norm.cc.
#include <cmath>

#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {
namespace {

// Column-reduction tiles: 32 channels by 8 row lanes per block.
constexpr int kTileC = 32, kTileR = 8;

// out[k * c + ch] += sum over rows r of f(k, r, ch) for k < K, with blocks
// splitting the rows (double atomics; out must be zeroed).
template <int K, typename F>
__global__ void ColumnReduceKernel(int64_t rows, int64_t c, F f, double* out) {
  __shared__ double partial[K][kTileR][kTileC];
  const int64_t ch = static_cast<int64_t>(blockIdx.x) * kTileC + threadIdx.x;
  double acc[K];
  for (int k = 0; k < K; ++k) acc[k] = 0.0;
  if (ch < c) {
    for (int64_t r = static_cast<int64_t>(blockIdx.y) * kTileR + threadIdx.y; r < rows;
         r += static_cast<int64_t>(gridDim.y) * kTileR) {
      for (int k = 0; k < K; ++k) acc[k] += f(k, r, ch);
    }
  }
  for (int k = 0; k < K; ++k) partial[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0 && ch < c) {
    for (int k = 0; k < K; ++k) {
      double s = 0.0;
      for (int i = 0; i < kTileR; ++i) s += partial[k][i][threadIdx.x];
      atomicAdd(&out[k * c + ch], s);
    }
  }
}

template <int K, typename F>
void ColumnReduce(int64_t rows, int64_t c, F f, double* out, cudaStream_t stream) {
  EDL_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double) * K * c, stream));
  const int64_t col_blocks = (c + kTileC - 1) / kTileC;
  const int64_t row_blocks = std::clamp<int64_t>((rows + kTileR * 32 - 1) / (kTileR * 32), 1, 1024);
  dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(row_blocks));
  ColumnReduceKernel<K><<<grid, dim3(kTileC, kTileR), 0, stream>>>(rows, c, f, out);
  EDL_CUDA_LAUNCHED();
}

struct ValueOf {
  const float* x;
  int64_t c;
  __device__ double operator()(int, int64_t r, int64_t ch) const { return x[r * c + ch]; }
};

struct SquaredDeviation {
  const float* x;
  const double* mean;
  int64_t c;
  __device__ double operator()(int, int64_t r, int64_t ch) const {
    double d = x[r * c + ch] - mean[ch];
    return d * d;
  }
};

__global__ void MeanKernel(const double* sum, int64_t rows, int64_t c, double* mean_d,
                           float* mean) {
  EDL_GRID_STRIDE(ch, c) {
    mean_d[ch] = sum[ch] / rows;
    mean[ch] = static_cast<float>(mean_d[ch]);
  }
}

__global__ void VarianceKernel(const double* sq, int64_t rows, int64_t c, float* variance) {
  EDL_GRID_STRIDE(ch, c) { variance[ch] = static_cast<float>(sq[ch] / rows); }
}

__global__ void BatchNormApplyKernel(const float* x, const float* gamma, const float* beta,
                                     const float* mean, const float* variance, float epsilon,
                                     float* y, int64_t n, int64_t c) {
  EDL_GRID_STRIDE(i, n) {
    const int64_t ch = i % c;
    double inv = 1.0 / sqrt(static_cast<double>(variance[ch]) + epsilon);
    y[i] = static_cast<float>(gamma[ch] * (x[i] - mean[ch]) * inv + beta[ch]);
  }
}

// k = 0: dy; k = 1: dy * xhat.
struct BatchNormGradSums {
  const float* dy;
  const float* x;
  const float* mean;
  const float* variance;
  float epsilon;
  int64_t c;
  __device__ double operator()(int k, int64_t r, int64_t ch) const {
    double g = dy[r * c + ch];
    if (k == 0) return g;
    double inv = 1.0 / sqrt(static_cast<double>(variance[ch]) + epsilon);
    return g * ((x[r * c + ch] - static_cast<double>(mean[ch])) * inv);
  }
};

__global__ void BatchNormBackwardKernel(const float* dy, const float* x, const float* gamma,
                                        const float* mean, const float* variance, float epsilon,
                                        const double* sums, float* dx, int64_t rows, int64_t c) {
  EDL_GRID_STRIDE(i, rows * c) {
    const int64_t ch = i % c;
    double inv = 1.0 / sqrt(static_cast<double>(variance[ch]) + epsilon);
    double xhat = (x[i] - static_cast<double>(mean[ch])) * inv;
    dx[i] = static_cast<float>(gamma[ch] * inv *
                               (dy[i] - sums[ch] / rows - xhat * sums[c + ch] / rows));
  }
}

__global__ void ToFloatKernel(const double* in, float* out, int64_t n) {
  EDL_GRID_STRIDE(i, n) { out[i] = static_cast<float>(in[i]); }
}

// Sums a double per thread over the block; every thread gets the total.
__device__ double BlockSum(double v, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  double total = scratch[0];
  __syncthreads();
  return total;
}

// One block per row.
__global__ void LayerNormForwardKernel(const float* x, const float* gamma, const float* beta,
                                       float epsilon, float* y, float* mean, float* variance,
                                       int64_t rows, int64_t c) {
  __shared__ double scratch[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = x + r * c;
    double s = 0;
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) s += row[i];
    const double m = BlockSum(s, scratch) / c;
    double sq = 0;
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      sq += (row[i] - m) * (row[i] - m);
    }
    const double var = BlockSum(sq, scratch) / c;
    const double inv = 1.0 / sqrt(var + epsilon);
    if (threadIdx.x == 0) {
      mean[r] = static_cast<float>(m);
      variance[r] = static_cast<float>(var);
    }
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      y[r * c + i] = static_cast<float>(gamma[i] * (row[i] - m) * inv + beta[i]);
    }
  }
}

__global__ void LayerNormBackwardKernel(const float* dy, const float* x, const float* gamma,
                                        const float* mean, const float* variance, float epsilon,
                                        float* dx, int64_t rows, int64_t c) {
  __shared__ double scratch[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* px = x + r * c;
    const float* pdy = dy + r * c;
    const double m = mean[r];
    const double inv = 1.0 / sqrt(static_cast<double>(variance[r]) + epsilon);
    double sg = 0, sgx = 0;
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      double g = static_cast<double>(pdy[i]) * gamma[i];
      sg += g;
      sgx += g * ((px[i] - m) * inv);
    }
    const double sum_g = BlockSum(sg, scratch);
    const double sum_g_xhat = BlockSum(sgx, scratch);
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      double xhat = (px[i] - m) * inv;
      double g = static_cast<double>(pdy[i]) * gamma[i];
      dx[r * c + i] = static_cast<float>(inv * (g - sum_g / c - xhat * sum_g_xhat / c));
    }
  }
}

// k = 0: dy * xhat (dgamma); k = 1: dy (dbeta); xhat with per-row stats.
struct LayerNormGradSums {
  const float* dy;
  const float* x;
  const float* mean;
  const float* variance;
  float epsilon;
  int64_t c;
  __device__ double operator()(int k, int64_t r, int64_t ch) const {
    double g = dy[r * c + ch];
    if (k == 1) return g;
    double inv = 1.0 / sqrt(static_cast<double>(variance[r]) + epsilon);
    return g * ((x[r * c + ch] - static_cast<double>(mean[r])) * inv);
  }
};

unsigned RowBlocks(int64_t rows) {
  return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, int64_t{1} << 20));
}

}  // namespace

void BatchNormStatistics(const float* x, int64_t rows, int64_t c, float* mean, float* variance,
                         DeviceAllocator& allocator, cudaStream_t stream) {
  DeviceBuffer sum(allocator, sizeof(double) * c);
  DeviceBuffer mean_d(allocator, sizeof(double) * c);
  DeviceBuffer sq(allocator, sizeof(double) * c);
  ColumnReduce<1>(rows, c, ValueOf{x, c}, sum.as<double>(), stream);
  MeanKernel<<<BlocksFor(c), kThreads, 0, stream>>>(sum.as<double>(), rows, c, mean_d.as<double>(),
                                                    mean);
  EDL_CUDA_LAUNCHED();
  ColumnReduce<1>(rows, c, SquaredDeviation{x, mean_d.as<double>(), c}, sq.as<double>(), stream);
  VarianceKernel<<<BlocksFor(c), kThreads, 0, stream>>>(sq.as<double>(), rows, c, variance);
  EDL_CUDA_LAUNCHED();
}

void BatchNormApply(const float* x, const float* gamma, const float* beta, const float* mean,
                    const float* variance, float epsilon, float* y, int64_t rows, int64_t c,
                    cudaStream_t stream) {
  const int64_t n = rows * c;
  if (n == 0) return;
  BatchNormApplyKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, gamma, beta, mean, variance,
                                                              epsilon, y, n, c);
  EDL_CUDA_LAUNCHED();
}

void BatchNormBackward(const float* dy, const float* x, const float* gamma, const float* mean,
                       const float* variance, float epsilon, float* dx, float* dgamma, float* dbeta,
                       int64_t rows, int64_t c, DeviceAllocator& allocator, cudaStream_t stream) {
  DeviceBuffer sums(allocator, sizeof(double) * 2 * c);
  ColumnReduce<2>(rows, c, BatchNormGradSums{dy, x, mean, variance, epsilon, c}, sums.as<double>(),
                  stream);
  ToFloatKernel<<<BlocksFor(c), kThreads, 0, stream>>>(sums.as<double>(), dbeta, c);
  ToFloatKernel<<<BlocksFor(c), kThreads, 0, stream>>>(sums.as<double>() + c, dgamma, c);
  EDL_CUDA_LAUNCHED();
  BatchNormBackwardKernel<<<BlocksFor(rows * c), kThreads, 0, stream>>>(
      dy, x, gamma, mean, variance, epsilon, sums.as<double>(), dx, rows, c);
  EDL_CUDA_LAUNCHED();
}

void LayerNormForward(const float* x, const float* gamma, const float* beta, float epsilon,
                      float* y, float* mean, float* variance, int64_t rows, int64_t c,
                      cudaStream_t stream) {
  LayerNormForwardKernel<<<RowBlocks(rows), kThreads, 0, stream>>>(x, gamma, beta, epsilon, y, mean,
                                                                   variance, rows, c);
  EDL_CUDA_LAUNCHED();
}

void LayerNormBackward(const float* dy, const float* x, const float* gamma, const float* mean,
                       const float* variance, float epsilon, float* dx, float* dgamma, float* dbeta,
                       int64_t rows, int64_t c, DeviceAllocator& allocator, cudaStream_t stream) {
  LayerNormBackwardKernel<<<RowBlocks(rows), kThreads, 0, stream>>>(dy, x, gamma, mean, variance,
                                                                    epsilon, dx, rows, c);
  EDL_CUDA_LAUNCHED();
  DeviceBuffer sums(allocator, sizeof(double) * 2 * c);
  ColumnReduce<2>(rows, c, LayerNormGradSums{dy, x, mean, variance, epsilon, c}, sums.as<double>(),
                  stream);
  ToFloatKernel<<<BlocksFor(c), kThreads, 0, stream>>>(sums.as<double>(), dgamma, c);
  ToFloatKernel<<<BlocksFor(c), kThreads, 0, stream>>>(sums.as<double>() + c, dbeta, c);
  EDL_CUDA_LAUNCHED();
}

void ColumnSums(const float* x, int64_t rows, int64_t c, float* out, DeviceAllocator& allocator,
                cudaStream_t stream) {
  DeviceBuffer sums(allocator, sizeof(double) * c);
  ColumnReduce<1>(rows, c, ValueOf{x, c}, sums.as<double>(), stream);
  ToFloatKernel<<<BlocksFor(c), kThreads, 0, stream>>>(sums.as<double>(), out, c);
  EDL_CUDA_LAUNCHED();
}

}  // namespace edl::tensor::cuda
