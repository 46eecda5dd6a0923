// Elementwise kernels: every Eltwise kind forward and backward (the formulas
// of tensor/reference/eltwise_math.h in float), Affine, AddInPlace, AddBias.
#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {
namespace {

// The values of edl::tensor::Eltwise.
enum Kind {
  kRelu,
  kSigmoid,
  kTanh,
  kGelu,
  kGeluTanh,
  kElu,
  kSelu,
  kSoftplus,
  kSwish,
  kLinear,
  kExp,
  kLog,
  kSqrt,
  kSquare,
  kAbs,
  kClip,
};

constexpr float kSeluScale = 1.0507009873554805f;
constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kInvSqrt2Pi = 0.3989422804014327f;
constexpr float kInvSqrt2 = 0.7071067811865476f;

__device__ float Sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

__device__ float Value(int kind, float x, float alpha, float beta) {
  switch (kind) {
    case kRelu: return x > 0 ? x : alpha * x;
    case kSigmoid: return Sigmoid(x);
    case kTanh: return tanhf(x);
    case kGelu: return 0.5f * x * (1.f + erff(x * kInvSqrt2));
    case kGeluTanh: return 0.5f * x * (1.f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
    case kElu: return x > 0 ? x : alpha * expm1f(x);
    case kSelu: return kSeluScale * (x > 0 ? x : kSeluAlpha * expm1f(x));
    case kSoftplus: return fmaxf(x, 0.f) + log1pf(expf(-fabsf(x)));
    case kSwish: return x * Sigmoid(x);
    case kLinear: return alpha * x + beta;
    case kExp: return expf(x);
    case kLog: return logf(x);
    case kSqrt: return sqrtf(x);
    case kSquare: return x * x;
    case kAbs: return fabsf(x);
    case kClip: {
      float lo = x < alpha ? alpha : x;  // std::max(x, alpha)
      return beta < lo ? beta : lo;      // std::min(lo, beta)
    }
  }
  return 0.f;
}

__device__ float Derivative(int kind, float x, float alpha, float beta) {
  switch (kind) {
    case kRelu: return x > 0 ? 1.f : alpha;
    case kSigmoid: {
      float s = Sigmoid(x);
      return s * (1.f - s);
    }
    case kTanh: {
      float t = tanhf(x);
      return 1.f - t * t;
    }
    case kGelu: return 0.5f * (1.f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x);
    case kGeluTanh: {
      float u = kSqrt2OverPi * (x + 0.044715f * x * x * x);
      float t = tanhf(u);
      float du = kSqrt2OverPi * (1.f + 3.f * 0.044715f * x * x);
      return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * du;
    }
    case kElu: return x > 0 ? 1.f : alpha * expf(x);
    case kSelu: return kSeluScale * (x > 0 ? 1.f : kSeluAlpha * expf(x));
    case kSoftplus: return Sigmoid(x);
    case kSwish: {
      float s = Sigmoid(x);
      return s + x * s * (1.f - s);
    }
    case kLinear: return alpha;
    case kExp: return expf(x);
    case kLog: return 1.f / x;
    case kSqrt: return 0.5f / sqrtf(x);
    case kSquare: return 2.f * x;
    case kAbs: return x > 0 ? 1.f : (x < 0 ? -1.f : 0.f);
    case kClip: return (x >= alpha && x <= beta) ? 1.f : 0.f;
  }
  return 0.f;
}

__global__ void ForwardKernel(int kind, const float* x, float alpha, float beta, float* y,
                              int64_t n) {
  EDL_GRID_STRIDE(i, n) { y[i] = Value(kind, x[i], alpha, beta); }
}

__global__ void BackwardKernel(int kind, const float* dy, const float* x, float alpha, float beta,
                               float* dx, int64_t n) {
  EDL_GRID_STRIDE(i, n) { dx[i] = dy[i] * Derivative(kind, x[i], alpha, beta); }
}

__global__ void AffineKernel(const float* x, float alpha, float beta, float* y, int64_t n) {
  EDL_GRID_STRIDE(i, n) { y[i] = alpha * x[i] + beta; }
}

__global__ void AddInPlaceKernel(float* y, const float* x, float alpha, int64_t n) {
  EDL_GRID_STRIDE(i, n) { y[i] += alpha * x[i]; }
}

__global__ void AddBiasKernel(float* y, const float* bias, int64_t n, int64_t c) {
  EDL_GRID_STRIDE(i, n) { y[i] += bias[i % c]; }
}

}  // namespace

void EltwiseForward(int kind, const float* x, float alpha, float beta, float* y, int64_t n,
                    cudaStream_t stream) {
  ForwardKernel<<<BlocksFor(n), kThreads, 0, stream>>>(kind, x, alpha, beta, y, n);
  EDL_CUDA_LAUNCHED();
}

void EltwiseBackward(int kind, const float* dy, const float* x, float alpha, float beta, float* dx,
                     int64_t n, cudaStream_t stream) {
  BackwardKernel<<<BlocksFor(n), kThreads, 0, stream>>>(kind, dy, x, alpha, beta, dx, n);
  EDL_CUDA_LAUNCHED();
}

void Affine(const float* x, float alpha, float beta, float* y, int64_t n, cudaStream_t stream) {
  AffineKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, alpha, beta, y, n);
  EDL_CUDA_LAUNCHED();
}

void AddInPlace(float* y, const float* x, float alpha, int64_t n, cudaStream_t stream) {
  AddInPlaceKernel<<<BlocksFor(n), kThreads, 0, stream>>>(y, x, alpha, n);
  EDL_CUDA_LAUNCHED();
}

void AddBias(float* y, const float* bias, int64_t rows, int64_t c, cudaStream_t stream) {
  const int64_t n = rows * c;
  if (n == 0) return;
  AddBiasKernel<<<BlocksFor(n), kThreads, 0, stream>>>(y, bias, n, c);
  EDL_CUDA_LAUNCHED();
}

}  // namespace edl::tensor::cuda
