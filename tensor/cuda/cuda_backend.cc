// CudaBackend: elementwise, broadcasting, reductions, normalization, pooling,
// shape ops and sparse rows (edl's kernels). Matrix products and softmax are
// in linalg.cc, convolutions in conv.cc.
#include "tensor/cuda/cuda_backend.h"

#include "tensor/cuda/kernels.h"

namespace edl::tensor::cuda {

// The kernels take these enums as ints; their values must not drift.
static_assert(static_cast<int>(Eltwise::kClip) == 15 && static_cast<int>(Eltwise::kLinear) == 9);
static_assert(static_cast<int>(Binary::kMin) == 5);
static_assert(static_cast<int>(Reduce::kMin) == 3);
static_assert(static_cast<int>(DType::kFloat32) == 0 && static_cast<int>(DType::kInt64) == 1 &&
              static_cast<int>(DType::kUInt8) == 2);

namespace {

// shape left-padded with 1s to `rank` axes.
Dims DimsOf(const Shape& shape, int rank) {
  EDL_CHECK_LE(rank, kMaxRank) << "CUDA backend: rank " << rank;
  Dims d;
  const int offset = rank - static_cast<int>(shape.size());
  for (int i = 0; i < rank; ++i) d.v[i] = i < offset ? 1 : shape[i - offset];
  return d;
}

// Element strides of `shape` broadcast to `out` (0 on broadcast axes).
Dims BroadcastStridesOf(const Shape& shape, const Shape& out) {
  const int rank = static_cast<int>(out.size());
  const Dims padded = DimsOf(shape, rank);
  Dims strides;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides.v[i] = padded.v[i] == 1 ? 0 : stride;
    stride *= padded.v[i];
  }
  return strides;
}

// Bytes per slab after `axis` (inclusive) and slabs before it.
size_t SlabBytes(const Tensor& t, int axis) {
  size_t bytes = DTypeSize(t.dtype());
  for (int i = axis; i < t.rank(); ++i) bytes *= t.dim(i);
  return bytes;
}
int64_t Outer(const Tensor& t, int axis) {
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= t.dim(i);
  return outer;
}

PoolGeometry GeometryOf(const Tensor& x, const Tensor& y, const Pool2DParams& p) {
  return PoolGeometry{x.dim(0),     x.dim(1),     x.dim(2),     x.dim(3),
                      y.dim(1),     y.dim(2),     p.kernel[0],  p.kernel[1],
                      p.strides[0], p.strides[1], p.padding[0], p.padding[2]};
}

}  // namespace

void CudaBackend::EltwiseForward(Eltwise kind, const Tensor& x, float alpha, float beta,
                                 Tensor& y) {
  cuda::EltwiseForward(static_cast<int>(kind), x.f32(), alpha, beta, y.f32(), x.numel(),
                       ctx_.stream);
}

void CudaBackend::EltwiseBackward(Eltwise kind, const Tensor& dy, const Tensor& x, float alpha,
                                  float beta, Tensor& dx) {
  cuda::EltwiseBackward(static_cast<int>(kind), dy.f32(), x.f32(), alpha, beta, dx.f32(), x.numel(),
                        ctx_.stream);
}

void CudaBackend::BinaryOp(Binary kind, const Tensor& a, const Tensor& b, Tensor& y) {
  const int rank = y.rank();
  cuda::BinaryBroadcast(static_cast<int>(kind), a.f32(), BroadcastStridesOf(a.shape(), y.shape()),
                        b.f32(), BroadcastStridesOf(b.shape(), y.shape()), y.f32(),
                        DimsOf(y.shape(), rank), rank, y.numel(), ctx_.stream);
}

void CudaBackend::Affine(const Tensor& x, float alpha, float beta, Tensor& y) {
  cuda::Affine(x.f32(), alpha, beta, y.f32(), x.numel(), ctx_.stream);
}

void CudaBackend::SumToShape(const Tensor& x, Tensor& y) {
  const int rank = x.rank();
  cuda::ReduceToShape(static_cast<int>(Reduce::kSum), x.f32(), DimsOf(x.shape(), rank), y.f32(),
                      DimsOf(y.shape(), rank), rank, ctx_.stream);
}

void CudaBackend::AddInPlace(Tensor& y, const Tensor& x, float alpha) {
  cuda::AddInPlace(y.f32(), x.f32(), alpha, y.numel(), ctx_.stream);
}

void CudaBackend::ReduceOp(Reduce kind, const Tensor& x, Tensor& y) {
  const int rank = x.rank();
  cuda::ReduceToShape(static_cast<int>(kind), x.f32(), DimsOf(x.shape(), rank), y.f32(),
                      DimsOf(y.shape(), rank), rank, ctx_.stream);
}

Tensor CudaBackend::Pool2DForward(PoolKind kind, const Tensor& x, const Pool2DParams& p,
                                  Tensor& y) {
  const PoolGeometry g = GeometryOf(x, y, p);
  if (kind == PoolKind::kAvg) {
    AvgPoolForward(x.f32(), y.f32(), g, ctx_.stream);
    return Tensor();
  }
  Tensor argmax = Tensor::Empty(y.shape(), DType::kInt64, Device::kCUDA);
  MaxPoolForward(x.f32(), y.f32(), argmax.i64(), g, ctx_.stream);
  return argmax;
}

void CudaBackend::Pool2DBackward(PoolKind kind, const Tensor& dy, const Tensor& x,
                                 const Tensor& workspace, const Pool2DParams& p, Tensor& dx) {
  const PoolGeometry g = GeometryOf(x, dy, p);
  if (kind == PoolKind::kAvg) {
    AvgPoolBackward(dy.f32(), dx.f32(), g, ctx_.stream);
    return;
  }
  Tensor argmax = workspace;
  if (!argmax.defined() || argmax.dtype() != DType::kInt64 || argmax.device() != Device::kCUDA ||
      argmax.shape() != dy.shape()) {
    argmax = Tensor::Empty(dy.shape(), DType::kInt64, Device::kCUDA);
    DeviceBuffer y(ctx_.allocator, dy.bytes());
    MaxPoolForward(x.f32(), y.as<float>(), argmax.i64(), g, ctx_.stream);
  }
  MaxPoolBackward(dy.f32(), argmax.i64(), dx.f32(), g, ctx_.stream);
}

void CudaBackend::BatchNormTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    float epsilon, Tensor& y, Tensor& mean, Tensor& variance) {
  const int64_t rows = x.dim(0), c = x.dim(1);
  BatchNormStatistics(x.f32(), rows, c, mean.f32(), variance.f32(), ctx_.allocator, ctx_.stream);
  BatchNormApply(x.f32(), gamma.f32(), beta.f32(), mean.f32(), variance.f32(), epsilon, y.f32(),
                 rows, c, ctx_.stream);
}

void CudaBackend::BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                     const Tensor& mean, const Tensor& variance, float epsilon,
                                     Tensor& y) {
  const int64_t c = x.dim(-1);
  BatchNormApply(x.f32(), gamma.f32(), beta.f32(), mean.f32(), variance.f32(), epsilon, y.f32(),
                 x.numel() / c, c, ctx_.stream);
}

void CudaBackend::BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& variance, float epsilon,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  cuda::BatchNormBackward(dy.f32(), x.f32(), gamma.f32(), mean.f32(), variance.f32(), epsilon,
                          dx.f32(), dgamma.f32(), dbeta.f32(), x.dim(0), x.dim(1), ctx_.allocator,
                          ctx_.stream);
}

void CudaBackend::LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   float epsilon, Tensor& y, Tensor& mean, Tensor& variance) {
  cuda::LayerNormForward(x.f32(), gamma.f32(), beta.f32(), epsilon, y.f32(), mean.f32(),
                         variance.f32(), x.dim(0), x.dim(1), ctx_.stream);
}

void CudaBackend::LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& variance, float epsilon,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  cuda::LayerNormBackward(dy.f32(), x.f32(), gamma.f32(), mean.f32(), variance.f32(), epsilon,
                          dx.f32(), dgamma.f32(), dbeta.f32(), x.dim(0), x.dim(1), ctx_.allocator,
                          ctx_.stream);
}

void CudaBackend::Concat(const std::vector<Tensor>& xs, int axis, Tensor& y) {
  const int64_t outer = Outer(y, axis);
  const size_t y_slab = SlabBytes(y, axis);
  char* py = static_cast<char*>(y.raw_data());
  size_t offset = 0;
  for (const Tensor& x : xs) {
    const size_t x_slab = SlabBytes(x, axis);
    if (x_slab == 0) continue;
    EDL_CUDA_CHECK(cudaMemcpy2DAsync(py + offset, y_slab, x.raw_data(), x_slab, x_slab, outer,
                                     cudaMemcpyDeviceToDevice, ctx_.stream));
    offset += x_slab;
  }
}

void CudaBackend::Split(const Tensor& x, int axis, std::vector<Tensor>& ys) {
  const int64_t outer = Outer(x, axis);
  const size_t x_slab = SlabBytes(x, axis);
  const char* px = static_cast<const char*>(x.raw_data());
  size_t offset = 0;
  for (Tensor& y : ys) {
    const size_t y_slab = SlabBytes(y, axis);
    if (y_slab == 0) continue;
    EDL_CUDA_CHECK(cudaMemcpy2DAsync(y.raw_data(), y_slab, px + offset, x_slab, y_slab, outer,
                                     cudaMemcpyDeviceToDevice, ctx_.stream));
    offset += y_slab;
  }
}

void CudaBackend::Transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  const int rank = x.rank();
  EDL_CHECK_LE(rank, kMaxRank) << "CUDA backend: rank " << rank;
  int64_t x_strides[kMaxRank];
  int64_t stride = 1;
  for (int a = rank - 1; a >= 0; --a) {
    x_strides[a] = stride;
    stride *= x.dim(a);
  }
  Dims from;
  for (int k = 0; k < rank; ++k) from.v[k] = x_strides[perm[k]];
  cuda::Permute(x.f32(), from, y.f32(), DimsOf(y.shape(), rank), rank, y.numel(), ctx_.stream);
}

void CudaBackend::Cast(const Tensor& x, Tensor& y) {
  cuda::Cast(x.raw_data(), static_cast<int>(x.dtype()), y.raw_data(), static_cast<int>(y.dtype()),
             x.numel(), ctx_.stream);
}

void CudaBackend::DropoutMask(uint64_t seed, uint64_t drop_below, float keep_scale, Tensor& mask) {
  cuda::DropoutMask(mask.f32(), mask.numel(), seed, drop_below, keep_scale, ctx_.stream);
}

void CudaBackend::Gather(const Tensor& table, const Tensor& ids, Tensor& y) {
  cuda::Gather(table.f32(), table.dim(0), table.dim(1), ids.i64(), ids.numel(), y.f32(),
               ctx_.stream);
}

SparseRows CudaBackend::Coalesce(const SparseRows& rows) {
  const int64_t d = rows.values.dim(1);
  SparseRows out;
  out.num_rows = rows.num_rows;
  CoalesceRows(
      rows.ids.i64(), rows.values.f32(), rows.ids.numel(), d,
      [&](int64_t count) {
        out.ids = Tensor::Empty({count}, DType::kInt64, Device::kCUDA);
        out.values = Tensor::Empty({count, d}, DType::kFloat32, Device::kCUDA);
        return CoalesceOutputs{out.ids.i64(), out.values.f32()};
      },
      ctx_.allocator, ctx_.stream);
  return out;
}

void CudaBackend::ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) {
  cuda::ScatterAdd(table.f32(), table.dim(0), table.dim(1), rows.ids.i64(), rows.values.f32(),
                   rows.ids.numel(), alpha, ctx_.stream);
}

void CudaBackend::ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, Tensor& value,
                              const Tensor& grad, std::vector<Tensor>& slots, const Tensor& ids) {
  float* s[kMaxUpdateSlots] = {nullptr, nullptr, nullptr};
  for (size_t k = 0; k < slots.size(); ++k) s[k] = slots[k].f32();
  const int64_t num_rows = value.rank() == 0 ? 1 : value.dim(0);
  const int64_t row_size = num_rows == 0 ? 0 : value.numel() / num_rows;
  cuda::ApplyUpdate(rule, c, value.f32(), grad.f32(), s, ids.defined() ? ids.i64() : nullptr,
                    num_rows, row_size, grad.numel(), ctx_.stream);
}

}  // namespace edl::tensor::cuda
