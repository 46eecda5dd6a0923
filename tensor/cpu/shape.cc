// CPU backend: concat (oneDNN for float32), split, casts, and the sparse-row
// ops (gather, coalesce, scatter-add) as OpenMP loops.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"
#include "tensor/cpu/parallel.h"
#include "tensor/dropout_mask.h"

namespace edl::tensor::cpu {
namespace {

int64_t Outer(const Tensor& t, int axis) {
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= t.dim(i);
  return outer;
}

// Elements per outer index: the product of dims from axis on.
int64_t Slab(const Tensor& t, int axis) {
  int64_t n = 1;
  for (int i = axis; i < t.rank(); ++i) n *= t.dim(i);
  return n;
}

// Copies rows of `bytes` from src (row pitch src_pitch) to dst.
void CopyRows(char* dst, size_t dst_pitch, const char* src, size_t src_pitch, size_t bytes,
              int64_t rows) {
  ParallelFor(rows, std::max<int64_t>(1, 65536 / std::max<size_t>(bytes, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r) {
                  std::memcpy(dst + r * dst_pitch, src + r * src_pitch, bytes);
                }
              });
}

}  // namespace

void DnnlBackend::Concat(const std::vector<Tensor>& xs, int axis, Tensor& y) {
  const int64_t outer = Outer(y, axis);
  std::vector<const Tensor*> parts;
  for (const Tensor& x : xs) {
    if (x.numel() > 0) parts.push_back(&x);
  }
  if (y.dtype() == DType::kFloat32 && parts.size() > 1) {
    Key key("concat");
    key << outer;
    for (const Tensor* x : parts) key << Slab(*x, axis);
    struct Entry {
      std::vector<dnnl::memory::desc> srcs;
      dnnl::memory::desc dst;
      dnnl::concat prim;
    };
    RunDnnl("Concat", [&] {
      auto e = Cached<Entry>(key.str(), [&] {
        auto entry = std::make_shared<Entry>();
        for (const Tensor* x : parts) {
          entry->srcs.push_back(PlainMd({outer, Slab(*x, axis)}));
        }
        entry->dst = PlainMd({outer, Slab(y, axis)});
        entry->prim =
            dnnl::concat(dnnl::concat::primitive_desc(entry->dst, 1, entry->srcs, Engine()));
        return entry;
      });
      std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, UserMemory(e->dst, y)}};
      for (size_t i = 0; i < parts.size(); ++i) {
        args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = UserMemory(e->srcs[i], *parts[i]);
      }
      e->prim.execute(ThreadStream(), args);
    });
    return;
  }
  const size_t esize = DTypeSize(y.dtype());
  const size_t y_pitch = Slab(y, axis) * esize;
  size_t offset = 0;
  for (const Tensor* x : parts) {
    const size_t bytes = Slab(*x, axis) * esize;
    CopyRows(static_cast<char*>(y.raw_data()) + offset, y_pitch,
             static_cast<const char*>(x->raw_data()), bytes, bytes, outer);
    offset += bytes;
  }
}

void DnnlBackend::Split(const Tensor& x, int axis, std::vector<Tensor>& ys) {
  const int64_t outer = Outer(x, axis);
  const size_t esize = DTypeSize(x.dtype());
  const size_t x_pitch = Slab(x, axis) * esize;
  size_t offset = 0;
  for (Tensor& y : ys) {
    const size_t bytes = Slab(y, axis) * esize;
    if (bytes == 0) continue;
    CopyRows(static_cast<char*>(y.raw_data()), bytes,
             static_cast<const char*>(x.raw_data()) + offset, x_pitch, bytes, outer);
    offset += bytes;
  }
}

namespace {
template <typename From, typename To>
void CastLoop(const Tensor& x, Tensor& y) {
  const From* px = static_cast<const From*>(x.raw_data());
  To* py = static_cast<To*>(y.raw_data());
  ParallelFor(x.numel(), 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) py[i] = static_cast<To>(px[i]);
  });
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

void DnnlBackend::Cast(const Tensor& x, Tensor& y) {
  switch (x.dtype()) {
    case DType::kFloat32: CastFrom<float>(x, y); return;
    case DType::kInt64: CastFrom<int64_t>(x, y); return;
    case DType::kUInt8: CastFrom<uint8_t>(x, y); return;
    default: EDL_CHECK(false) << "Cast from " << DTypeName(x.dtype());
  }
}

void DnnlBackend::DropoutMask(uint64_t seed, uint64_t drop_below, float keep_scale, Tensor& mask) {
  float* m = mask.f32();
  ParallelFor(mask.numel(), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) m[i] = DropoutMaskAt(seed, i, drop_below, keep_scale);
  });
}

void DnnlBackend::Gather(const Tensor& table, const Tensor& ids, Tensor& y) {
  const int64_t v = table.dim(0), d = table.dim(1);
  const int64_t* pid = ids.i64();
  const float* pt = table.f32();
  float* py = y.f32();
  ParallelFor(ids.numel(), std::max<int64_t>(1, 16384 / std::max<int64_t>(d, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                  const int64_t id = pid[i];
                  EDL_CHECK(id >= 0 && id < v)
                      << "Gather: id " << id << " outside [0, " << v << ")";
                  std::memcpy(py + i * d, pt + id * d, d * sizeof(float));
                }
              });
}

SparseRows DnnlBackend::Coalesce(const SparseRows& rows) {
  const int64_t n = rows.ids.numel(), d = rows.values.dim(1);
  const int64_t* pid = rows.ids.i64();
  // (id, position) pairs sorted: by id, repeats in position order (so sums
  // are taken in input order), without a comparison through an index.
  std::vector<std::pair<int64_t, int64_t>> sorted(n);
  for (int64_t i = 0; i < n; ++i) sorted[i] = {pid[i], i};
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = sorted[i].second;
  // starts[k]: the first position in `order` of the k-th unique id.
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || sorted[i].first != sorted[i - 1].first) starts.push_back(i);
  }
  const int64_t unique = static_cast<int64_t>(starts.size());
  starts.push_back(n);
  SparseRows out;
  out.num_rows = rows.num_rows;
  out.ids = Tensor::Empty({unique}, DType::kInt64);
  out.values = Tensor::Empty({unique, d});
  const float* pv = rows.values.f32();
  float* po = out.values.f32();
  ParallelFor(unique, std::max<int64_t>(1, 4096 / std::max<int64_t>(d, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t k = b; k < e; ++k) {
                  out.ids.i64()[k] = pid[order[starts[k]]];
                  float* dst = po + k * d;
                  std::memcpy(dst, pv + order[starts[k]] * d, d * sizeof(float));
                  for (int64_t i = starts[k] + 1; i < starts[k + 1]; ++i) {
                    const float* src = pv + order[i] * d;
#pragma omp simd
                    for (int64_t j = 0; j < d; ++j) dst[j] += src[j];
                  }
                }
              });
  return out;
}

void DnnlBackend::ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) {
  const int64_t v = table.dim(0), d = table.dim(1), n = rows.ids.numel();
  const int64_t* pid = rows.ids.i64();
  for (int64_t i = 0; i < n; ++i) {
    EDL_CHECK(pid[i] >= 0 && pid[i] < v)
        << "ScatterAdd: id " << pid[i] << " outside [0, " << v << ")";
  }
  const float* pv = rows.values.f32();
  float* pt = table.f32();
  // Threads own disjoint column ranges, so repeated ids never race.
  ParallelFor(d, std::max<int64_t>(64, (16384 + n - 1) / std::max<int64_t>(n, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t i = 0; i < n; ++i) {
                  float* dst = pt + pid[i] * d;
                  const float* src = pv + i * d;
#pragma omp simd
                  for (int64_t j = b; j < e; ++j) dst[j] += alpha * src[j];
                }
              });
}

void DnnlBackend::Transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  // A reorder from x read with permuted strides (in y's axis order) into y.
  Key key("transpose");
  key << x.shape();
  for (int a : perm) key << static_cast<int64_t>(a);
  struct Entry {
    dnnl::memory::desc src, dst;
    dnnl::reorder prim;
  };
  RunDnnl("Transpose", [&] {
    auto e = Cached<Entry>(key.str(), [&] {
      auto entry = std::make_shared<Entry>();
      const int rank = x.rank();
      Dims x_strides(rank, 1), strides(rank);
      for (int a = rank - 2; a >= 0; --a) x_strides[a] = x_strides[a + 1] * x.dim(a + 1);
      for (int k = 0; k < rank; ++k) strides[k] = x_strides[perm[k]];
      entry->src = dnnl::memory::desc(ToDims(y.shape()), dt::f32, strides);
      entry->dst = PlainMd(ToDims(y.shape()));
      entry->prim =
          dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), entry->src, Engine(), entry->dst));
      return entry;
    });
    dnnl::memory src = UserMemory(e->src, x), dst = UserMemory(e->dst, y);
    e->prim.execute(ThreadStream(), src, dst);
  });
}

}  // namespace edl::tensor::cpu
