// Broadcasting binary ops and reductions to a shape (ReduceOp, SumToShape):
// index arithmetic over up to kMaxRank axes, accumulating in double as the
// reference does.
#include <cmath>

#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {
namespace {

// The values of edl::tensor::Binary and edl::tensor::Reduce.
enum BinaryKind { kAdd, kSub, kMul, kDiv, kMax, kMin };
enum ReduceKind { kSum, kMean, kMaxReduce, kMinReduce };

__device__ float Apply(int kind, float u, float v) {
  switch (kind) {
    case kAdd: return u + v;
    case kSub: return u - v;
    case kMul: return u * v;
    case kDiv: return u / v;
    case kMax: return u < v ? v : u;  // std::max
    case kMin: return v < u ? v : u;  // std::min
  }
  return 0.f;
}

__global__ void BinaryKernel(int kind, const float* a, Dims sa, const float* b, Dims sb, float* y,
                             Dims dims, int rank, int64_t n) {
  EDL_GRID_STRIDE(i, n) {
    int64_t rest = i, oa = 0, ob = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t coord = rest % dims.v[d];
      rest /= dims.v[d];
      oa += coord * sa.v[d];
      ob += coord * sb.v[d];
    }
    y[i] = Apply(kind, a[oa], b[ob]);
  }
}

__global__ void SameShapeKernel(int kind, const float* a, const float* b, float* y, int64_t n) {
  EDL_GRID_STRIDE(i, n) { y[i] = Apply(kind, a[i], b[i]); }
}

// A reduction: every output element folds `count` inputs. The output's
// coordinates (kept axes) give a base offset into x; the reduced axes are
// walked by index.
struct ReducePlan {
  Dims kept_dims, kept_strides;  // over y's axes, x strides
  int kept_rank;
  Dims red_dims, red_strides;
  int red_rank;
  int64_t count;
};

__device__ int64_t Offset(int64_t i, const Dims& dims, const Dims& strides, int rank) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (i % dims.v[d]) * strides.v[d];
    i /= dims.v[d];
  }
  return offset;
}

__device__ double Init(int kind) {
  if (kind == kMaxReduce) return -INFINITY;
  if (kind == kMinReduce) return INFINITY;
  return 0.0;
}

__device__ double Fold(int kind, double acc, double v) {
  switch (kind) {
    case kMaxReduce: return acc < v ? v : acc;
    case kMinReduce: return v < acc ? v : acc;
    default: return acc + v;
  }
}

__device__ float Finish(int kind, double acc, int64_t count) {
  return static_cast<float>(kind == kMean ? acc / static_cast<double>(count) : acc);
}

// One thread per output (few inputs each).
__global__ void ReduceThreadKernel(int kind, const float* x, float* y, ReducePlan p,
                                   int64_t outputs) {
  EDL_GRID_STRIDE(o, outputs) {
    const int64_t base = Offset(o, p.kept_dims, p.kept_strides, p.kept_rank);
    double acc = Init(kind);
    for (int64_t r = 0; r < p.count; ++r) {
      acc = Fold(kind, acc, x[base + Offset(r, p.red_dims, p.red_strides, p.red_rank)]);
    }
    y[o] = Finish(kind, acc, p.count);
  }
}

// One block per output (many inputs each).
__global__ void ReduceBlockKernel(int kind, const float* x, float* y, ReducePlan p,
                                  int64_t outputs) {
  __shared__ double partial[kThreads];
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    const int64_t base = Offset(o, p.kept_dims, p.kept_strides, p.kept_rank);
    double acc = Init(kind);
    for (int64_t r = threadIdx.x; r < p.count; r += blockDim.x) {
      acc = Fold(kind, acc, x[base + Offset(r, p.red_dims, p.red_strides, p.red_rank)]);
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        partial[threadIdx.x] = Fold(kind, partial[threadIdx.x], partial[threadIdx.x + s]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[o] = Finish(kind, partial[0], p.count);
    __syncthreads();
  }
}

}  // namespace

void BinaryBroadcast(int kind, const float* a, const Dims& a_strides, const float* b,
                     const Dims& b_strides, float* y, const Dims& y_dims, int rank, int64_t n,
                     cudaStream_t stream) {
  // Both operands dense in y's shape: no index arithmetic.
  bool same = true;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (y_dims.v[d] != 1 && (a_strides.v[d] != stride || b_strides.v[d] != stride)) {
      same = false;
    }
    stride *= y_dims.v[d];
  }
  if (same) {
    SameShapeKernel<<<BlocksFor(n), kThreads, 0, stream>>>(kind, a, b, y, n);
  } else {
    BinaryKernel<<<BlocksFor(n), kThreads, 0, stream>>>(kind, a, a_strides, b, b_strides, y, y_dims,
                                                        rank, n);
  }
  EDL_CUDA_LAUNCHED();
}

void ReduceToShape(int kind, const float* x, const Dims& x_dims, float* y, const Dims& y_dims,
                   int rank, cudaStream_t stream) {
  ReducePlan p{};
  int64_t stride = 1, outputs = 1;
  p.count = 1;
  // Collected innermost first, then reversed into outer-to-inner order.
  Dims kd, ks, rd, rs;
  int nk = 0, nr = 0;
  for (int d = rank - 1; d >= 0; --d) {
    if (y_dims.v[d] == x_dims.v[d]) {
      kd.v[nk] = x_dims.v[d];
      ks.v[nk++] = stride;
      outputs *= x_dims.v[d];
    } else {
      rd.v[nr] = x_dims.v[d];
      rs.v[nr++] = stride;
      p.count *= x_dims.v[d];
    }
    stride *= x_dims.v[d];
  }
  for (int i = 0; i < nk; ++i) {
    p.kept_dims.v[i] = kd.v[nk - 1 - i];
    p.kept_strides.v[i] = ks.v[nk - 1 - i];
  }
  for (int i = 0; i < nr; ++i) {
    p.red_dims.v[i] = rd.v[nr - 1 - i];
    p.red_strides.v[i] = rs.v[nr - 1 - i];
  }
  p.kept_rank = nk;
  p.red_rank = nr;
  if (outputs == 0) return;
  if (p.count < 64) {
    ReduceThreadKernel<<<BlocksFor(outputs), kThreads, 0, stream>>>(kind, x, y, p, outputs);
  } else {
    unsigned blocks = static_cast<unsigned>(std::min<int64_t>(outputs, int64_t{1} << 20));
    ReduceBlockKernel<<<blocks, kThreads, 0, stream>>>(kind, x, y, p, outputs);
  }
  EDL_CUDA_LAUNCHED();
}

}  // namespace edl::tensor::cuda
