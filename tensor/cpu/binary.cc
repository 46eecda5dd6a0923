// CPU backend: broadcasting binary ops (oneDNN binary) and reductions
// (OpenMP loops for the outer x reduced x inner pattern, oneDNN reduction
// for the rest).
#include <algorithm>
#include <limits>
#include <vector>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"
#include "tensor/cpu/parallel.h"

namespace edl::tensor::cpu {
namespace {

// `shape` with leading 1s up to `rank` (at least 1).
Dims PadDims(const Shape& shape, size_t rank) {
  rank = std::max<size_t>(rank, 1);
  Dims d(rank - shape.size(), 1);
  d.insert(d.end(), shape.begin(), shape.end());
  return d;
}

// Writes `a` broadcast to y's shape into y.
void BroadcastCopy(const Tensor& a, Tensor& y) {
  Dims out = PadDims(y.shape(), y.rank()), in = PadDims(a.shape(), y.rank());
  const size_t rank = out.size();
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (size_t i = rank; i-- > 0;) {
    stride[i] = in[i] == 1 ? 0 : s;
    s *= in[i];
  }
  const int64_t inner = out[rank - 1], rows = y.numel() / inner;
  const float* pa = a.f32();
  float* py = y.f32();
  ParallelFor(rows, 64, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t offset = 0, rest = r;
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (rest % out[d]) * stride[d];
        rest /= out[d];
      }
      float* row = py + r * inner;
      if (stride[rank - 1] == 0) {
        std::fill(row, row + inner, pa[offset]);
      } else {
        std::copy(pa + offset, pa + offset + inner, row);
      }
    }
  });
}

struct BinaryEntry {
  dnnl::memory::desc md0, md1;
  dnnl::binary prim;
};

dnnl::algorithm ToDnnl(Binary kind) {
  using A = dnnl::algorithm;
  switch (kind) {
    case Binary::kAdd: return A::binary_add;
    case Binary::kSub: return A::binary_sub;
    case Binary::kMul: return A::binary_mul;
    case Binary::kDiv: return A::binary_div;
    case Binary::kMax: return A::binary_max;
    case Binary::kMin: return A::binary_min;
  }
  return A::binary_add;
}

// y = kind(src0, src1) (negated if `negate`); src0 has y's shape.
void RunBinary(Binary kind, const Tensor& src0, const Tensor& src1, bool negate, Tensor& y) {
  Dims d0 = PadDims(y.shape(), y.rank()), d1 = PadDims(src1.shape(), y.rank());
  Key key("binary");
  key << static_cast<int64_t>(kind) << static_cast<int64_t>(negate) << d0 << d1;
  RunDnnl("BinaryOp", [&] {
    auto e = Cached<BinaryEntry>(key.str(), [&] {
      auto entry = std::make_shared<BinaryEntry>();
      entry->md0 = PlainMd(d0);
      entry->md1 = PlainMd(d1);
      dnnl::primitive_attr attr;
      if (negate) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, -1.f, 0.f);
        attr.set_post_ops(ops);
      }
      entry->prim = dnnl::binary(dnnl::binary::primitive_desc(
          {ToDnnl(kind), entry->md0, entry->md1, entry->md0}, attr, Engine()));
      return entry;
    });
    auto m0 = UserMemory(e->md0, src0), m1 = UserMemory(e->md1, src1), md = UserMemory(e->md0, y);
    e->prim.execute(ThreadStream(),
                    {{DNNL_ARG_SRC_0, m0}, {DNNL_ARG_SRC_1, m1}, {DNNL_ARG_DST, md}});
  });
}

bool Commutes(Binary kind) {
  return kind == Binary::kAdd || kind == Binary::kMul || kind == Binary::kMax ||
         kind == Binary::kMin;
}

}  // namespace

void DnnlBackend::BinaryOp(Binary kind, const Tensor& a, const Tensor& b, Tensor& y) {
  if (a.numel() == y.numel()) {
    RunBinary(kind, a, b, false, y);
  } else if (b.numel() == y.numel() && Commutes(kind)) {
    RunBinary(kind, b, a, false, y);
  } else if (b.numel() == y.numel() && kind == Binary::kSub) {
    RunBinary(kind, b, a, true, y);  // a - b = -(b - a)
  } else {
    BroadcastCopy(a, y);
    RunBinary(kind, y, b, false, y);
  }
}

namespace {

// The dims of x as groups of (size, reduced?), merging neighbours of the
// same kind and dropping 1s.
struct Group {
  int64_t size;
  bool reduced;
};
std::vector<Group> Groups(const Dims& x, const Dims& y) {
  std::vector<Group> groups;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 1) continue;
    bool reduced = y[i] == 1;
    if (!groups.empty() && groups.back().reduced == reduced) {
      groups.back().size *= x[i];
    } else {
      groups.push_back({x[i], reduced});
    }
  }
  return groups;
}

template <Reduce kind>
inline float Combine(float a, float b) {
  if constexpr (kind == Reduce::kMax) return std::max(a, b);
  if constexpr (kind == Reduce::kMin) return std::min(a, b);
  return a + b;
}

// y[o, i] = reduce_r x[o, r, i].
template <Reduce kind>
void ReduceLoop(const float* x, float* y, int64_t outer, int64_t rsize, int64_t inner) {
  const float scale = kind == Reduce::kMean ? 1.f / rsize : 1.f;
  if (inner == 1) {
    ParallelFor(outer, std::max<int64_t>(1, 16384 / rsize), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const float* row = x + o * rsize;
        float acc = row[0];
        if constexpr (kind == Reduce::kSum || kind == Reduce::kMean) {
          acc = 0.f;
#pragma omp simd reduction(+ : acc)
          for (int64_t r = 0; r < rsize; ++r) acc += row[r];
        } else {
          for (int64_t r = 1; r < rsize; ++r) acc = Combine<kind>(acc, row[r]);
        }
        y[o] = acc * scale;
      }
    });
    return;
  }
  // Parallel over outer rows if there are enough, else over inner columns.
  const bool by_outer = outer >= Threads();
  auto block = [&](int64_t o, int64_t i0, int64_t i1) {
    float* out = y + o * inner;
    const float* in = x + o * rsize * inner;
    for (int64_t i = i0; i < i1; ++i) out[i] = in[i];
    for (int64_t r = 1; r < rsize; ++r) {
      const float* row = in + r * inner;
#pragma omp simd
      for (int64_t i = i0; i < i1; ++i) out[i] = Combine<kind>(out[i], row[i]);
    }
    if (scale != 1.f) {
      for (int64_t i = i0; i < i1; ++i) out[i] *= scale;
    }
  };
  if (by_outer) {
    ParallelFor(outer, 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) block(o, 0, inner);
    });
  } else {
    for (int64_t o = 0; o < outer; ++o) {
      ParallelFor(inner, 64, [&](int64_t b, int64_t e) { block(o, b, e); });
    }
  }
}

void ReduceDnnl(Reduce kind, const Tensor& x, const Dims& xd, const Dims& yd, Tensor& y) {
  using A = dnnl::algorithm;
  A alg = kind == Reduce::kSum    ? A::reduction_sum
          : kind == Reduce::kMean ? A::reduction_mean
          : kind == Reduce::kMax  ? A::reduction_max
                                  : A::reduction_min;
  struct Entry {
    dnnl::memory::desc src, dst;
    dnnl::reduction prim;
  };
  Key key("reduction");
  key << static_cast<int64_t>(kind) << xd << yd;
  RunDnnl("ReduceOp", [&] {
    auto e = Cached<Entry>(key.str(), [&] {
      auto entry = std::make_shared<Entry>();
      entry->src = PlainMd(xd);
      entry->dst = PlainMd(yd);
      entry->prim = dnnl::reduction(
          dnnl::reduction::primitive_desc({alg, entry->src, entry->dst, 0.f, 0.f}, Engine()));
      return entry;
    });
    auto src = UserMemory(e->src, x), dst = UserMemory(e->dst, y);
    e->prim.execute(ThreadStream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  });
}

// y's shape broadcasts to x's.
void ReduceTo(Reduce kind, const Tensor& x, Tensor& y) {
  Dims xd = PadDims(x.shape(), x.rank()), yd = PadDims(y.shape(), x.rank());
  std::vector<Group> g = Groups(xd, yd);
  // Match [kept] reduced [kept].
  int64_t outer = 1, rsize = 1, inner = 1;
  size_t i = 0;
  if (i < g.size() && !g[i].reduced) outer = g[i++].size;
  if (i < g.size() && g[i].reduced) rsize = g[i++].size;
  if (i < g.size() && !g[i].reduced) inner = g[i++].size;
  if (i < g.size()) {
    ReduceDnnl(kind, x, xd, yd, y);
    return;
  }
  const float* px = x.f32();
  float* py = y.f32();
  switch (kind) {
    case Reduce::kSum: ReduceLoop<Reduce::kSum>(px, py, outer, rsize, inner); break;
    case Reduce::kMean: ReduceLoop<Reduce::kMean>(px, py, outer, rsize, inner); break;
    case Reduce::kMax: ReduceLoop<Reduce::kMax>(px, py, outer, rsize, inner); break;
    case Reduce::kMin: ReduceLoop<Reduce::kMin>(px, py, outer, rsize, inner); break;
  }
}

}  // namespace

void DnnlBackend::ReduceOp(Reduce kind, const Tensor& x, Tensor& y) { ReduceTo(kind, x, y); }

void DnnlBackend::SumToShape(const Tensor& x, Tensor& y) { ReduceTo(Reduce::kSum, x, y); }

}  // namespace edl::tensor::cpu
