// Reference loops: concat/split, casts and sparse rows; ReferenceBackend().
#include <cstring>
#include <map>
#include <vector>

#include "tensor/reference/loop_backend.h"

namespace edl::tensor {

Backend& ReferenceBackend() {
  static reference::LoopBackend* backend = new reference::LoopBackend();
  return *backend;
}

namespace reference {
namespace {
// Bytes per slab: the product of dims after axis, times the element size.
size_t SlabBytes(const Tensor& t, int axis) {
  size_t inner = DTypeSize(t.dtype());
  for (int i = axis; i < t.rank(); ++i) inner *= t.dim(i);
  return inner;
}
int64_t Outer(const Tensor& t, int axis) {
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= t.dim(i);
  return outer;
}
}  // namespace

void LoopBackend::Concat(const std::vector<Tensor>& xs, int axis, Tensor& y) {
  const int64_t outer = Outer(y, axis);
  const size_t y_slab = SlabBytes(y, axis);
  char* py = static_cast<char*>(y.raw_data());
  size_t offset = 0;
  for (const Tensor& x : xs) {
    const size_t x_slab = SlabBytes(x, axis);
    if (x_slab == 0) continue;
    const char* px = static_cast<const char*>(x.raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(py + o * y_slab + offset, px + o * x_slab, x_slab);
    }
    offset += x_slab;
  }
}

void LoopBackend::Split(const Tensor& x, int axis, std::vector<Tensor>& ys) {
  const int64_t outer = Outer(x, axis);
  const size_t x_slab = SlabBytes(x, axis);
  const char* px = static_cast<const char*>(x.raw_data());
  size_t offset = 0;
  for (Tensor& y : ys) {
    const size_t y_slab = SlabBytes(y, axis);
    if (y_slab == 0) continue;
    char* py = static_cast<char*>(y.raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(py + o * y_slab, px + o * x_slab + offset, y_slab);
    }
    offset += y_slab;
  }
}

namespace {
template <typename From, typename To>
void CastLoop(const Tensor& x, Tensor& y) {
  const From* px = static_cast<const From*>(x.raw_data());
  To* py = static_cast<To*>(y.raw_data());
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = static_cast<To>(px[i]);
}
template <typename From>
void CastFrom(const Tensor& x, Tensor& y) {
  switch (y.dtype()) {
    case DType::kFloat32: CastLoop<From, float>(x, y); return;
    case DType::kInt64: CastLoop<From, int64_t>(x, y); return;
    case DType::kUInt8: CastLoop<From, uint8_t>(x, y); return;
    default: EDL_CHECK(false) << "Cast to " << DTypeName(y.dtype());
  }
}
}  // namespace

void LoopBackend::Cast(const Tensor& x, Tensor& y) {
  switch (x.dtype()) {
    case DType::kFloat32: CastFrom<float>(x, y); return;
    case DType::kInt64: CastFrom<int64_t>(x, y); return;
    case DType::kUInt8: CastFrom<uint8_t>(x, y); return;
    default: EDL_CHECK(false) << "Cast from " << DTypeName(x.dtype());
  }
}

void LoopBackend::Gather(const Tensor& table, const Tensor& ids, Tensor& y) {
  const int64_t v = table.dim(0), d = table.dim(1);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    int64_t id = ids.i64()[i];
    EDL_CHECK(id >= 0 && id < v) << "Gather: id " << id << " outside [0, " << v << ")";
    for (int64_t j = 0; j < d; ++j) y.f32()[i * d + j] = table.f32()[id * d + j];
  }
}

SparseRows LoopBackend::Coalesce(const SparseRows& rows) {
  const int64_t d = rows.values.dim(1);
  std::map<int64_t, std::vector<double>> sums;
  for (int64_t i = 0; i < rows.ids.numel(); ++i) {
    std::vector<double>& row = sums[rows.ids.i64()[i]];
    row.resize(d, 0.0);
    for (int64_t j = 0; j < d; ++j) row[j] += rows.values.f32()[i * d + j];
  }
  SparseRows out;
  out.num_rows = rows.num_rows;
  out.ids = Tensor::Empty({static_cast<int64_t>(sums.size())}, DType::kInt64);
  out.values = Tensor::Empty({static_cast<int64_t>(sums.size()), d});
  int64_t i = 0;
  for (const auto& [id, row] : sums) {
    out.ids.i64()[i] = id;
    for (int64_t j = 0; j < d; ++j) out.values.f32()[i * d + j] = static_cast<float>(row[j]);
    ++i;
  }
  return out;
}

void LoopBackend::ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) {
  const int64_t v = table.dim(0), d = table.dim(1);
  for (int64_t i = 0; i < rows.ids.numel(); ++i) {
    int64_t id = rows.ids.i64()[i];
    EDL_CHECK(id >= 0 && id < v) << "ScatterAdd: id " << id << " outside [0, " << v << ")";
    for (int64_t j = 0; j < d; ++j) {
      table.f32()[id * d + j] += alpha * rows.values.f32()[i * d + j];
    }
  }
}

void LoopBackend::Transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  const int rank = x.rank();
  // x's strides, read in y's axis order.
  std::vector<int64_t> x_strides(rank, 1), strides(rank);
  for (int a = rank - 2; a >= 0; --a) x_strides[a] = x_strides[a + 1] * x.dim(a + 1);
  for (int k = 0; k < rank; ++k) strides[k] = x_strides[perm[k]];
  std::vector<int64_t> index(rank, 0);
  const float* px = x.f32();
  float* py = y.f32();
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t offset = 0;
    for (int k = 0; k < rank; ++k) offset += index[k] * strides[k];
    py[i] = px[offset];
    for (int k = rank - 1; k >= 0; --k) {  // the next index of y, row-major
      if (++index[k] < y.dim(k)) break;
      index[k] = 0;
    }
  }
}

}  // namespace reference
}  // namespace edl::tensor
