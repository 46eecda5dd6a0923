// Reference loops: elementwise, broadcasting and reductions.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/reference/eltwise_math.h"
#include "tensor/reference/loop_backend.h"

namespace edl::tensor::reference {

std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out) {
  const size_t rank = out.size(), offset = rank - shape.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[offset + i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

namespace {

// Offset into a tensor with `strides` of the out-element with flat index i.
int64_t OffsetOf(int64_t i, const Shape& out, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t d = out.size(); d-- > 0;) {
    offset += (i % out[d]) * strides[d];
    i /= out[d];
  }
  return offset;
}

}  // namespace

void LoopBackend::EltwiseForward(Eltwise kind, const Tensor& x, float alpha, float beta,
                                 Tensor& y) {
  const float* px = x.f32();
  float* py = y.f32();
  for (int64_t i = 0; i < x.numel(); ++i) {
    py[i] = static_cast<float>(EltwiseValue(kind, px[i], alpha, beta));
  }
}

void LoopBackend::EltwiseBackward(Eltwise kind, const Tensor& dy, const Tensor& x, float alpha,
                                  float beta, Tensor& dx) {
  const float* pdy = dy.f32();
  const float* px = x.f32();
  float* pdx = dx.f32();
  for (int64_t i = 0; i < x.numel(); ++i) {
    pdx[i] = static_cast<float>(pdy[i] * EltwiseDerivative(kind, px[i], alpha, beta));
  }
}

void LoopBackend::BinaryOp(Binary kind, const Tensor& a, const Tensor& b, Tensor& y) {
  std::vector<int64_t> sa = BroadcastStrides(a.shape(), y.shape());
  std::vector<int64_t> sb = BroadcastStrides(b.shape(), y.shape());
  const float* pa = a.f32();
  const float* pb = b.f32();
  float* py = y.f32();
  for (int64_t i = 0; i < y.numel(); ++i) {
    float u = pa[OffsetOf(i, y.shape(), sa)];
    float v = pb[OffsetOf(i, y.shape(), sb)];
    float r = 0;
    switch (kind) {
      case Binary::kAdd: r = u + v; break;
      case Binary::kSub: r = u - v; break;
      case Binary::kMul: r = u * v; break;
      case Binary::kDiv: r = u / v; break;
      case Binary::kMax: r = std::max(u, v); break;
      case Binary::kMin: r = std::min(u, v); break;
    }
    py[i] = r;
  }
}

void LoopBackend::Affine(const Tensor& x, float alpha, float beta, Tensor& y) {
  const float* px = x.f32();
  float* py = y.f32();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = alpha * px[i] + beta;
}

void LoopBackend::SumToShape(const Tensor& x, Tensor& y) {
  std::vector<int64_t> sy = BroadcastStrides(y.shape(), x.shape());
  std::vector<double> acc(y.numel(), 0.0);
  const float* px = x.f32();
  for (int64_t i = 0; i < x.numel(); ++i) {
    acc[OffsetOf(i, x.shape(), sy)] += px[i];
  }
  float* py = y.f32();
  for (int64_t i = 0; i < y.numel(); ++i) py[i] = static_cast<float>(acc[i]);
}

void LoopBackend::AddInPlace(Tensor& y, const Tensor& x, float alpha) {
  const float* px = x.f32();
  float* py = y.f32();
  for (int64_t i = 0; i < y.numel(); ++i) py[i] += alpha * px[i];
}

void LoopBackend::ReduceOp(Reduce kind, const Tensor& x, Tensor& y) {
  std::vector<int64_t> sy = BroadcastStrides(y.shape(), x.shape());
  double init = 0.0;
  if (kind == Reduce::kMax) init = -std::numeric_limits<double>::infinity();
  if (kind == Reduce::kMin) init = std::numeric_limits<double>::infinity();
  std::vector<double> acc(y.numel(), init);
  const float* px = x.f32();
  for (int64_t i = 0; i < x.numel(); ++i) {
    double& a = acc[OffsetOf(i, x.shape(), sy)];
    switch (kind) {
      case Reduce::kSum:
      case Reduce::kMean: a += px[i]; break;
      case Reduce::kMax: a = std::max<double>(a, px[i]); break;
      case Reduce::kMin: a = std::min<double>(a, px[i]); break;
    }
  }
  const double count = static_cast<double>(x.numel()) / y.numel();
  float* py = y.f32();
  for (int64_t i = 0; i < y.numel(); ++i) {
    py[i] = static_cast<float>(kind == Reduce::kMean ? acc[i] / count : acc[i]);
  }
}

}  // namespace edl::tensor::reference
