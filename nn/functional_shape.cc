// Reshape, concatenation and reductions (nn/functional.h).
#include <algorithm>
#include <utility>

#include "nn/functional.h"
#include "nn/functional_util.h"

namespace edl::nn::fn {

Var Reshape(const Var& x, const Shape& shape) {
  Shape x_shape = x.shape();
  return MakeResult(x.value().Reshape(shape), {x},
                    [x_shape = std::move(x_shape)](const Tensor& dy) {
                      return std::vector<Tensor>{dy.Reshape(x_shape)};
                    });
}

Var Slice(const Var& x, int axis, int64_t begin, int64_t size) {
  const Tensor& xv = x.value();
  const int a = axis < 0 ? axis + xv.rank() : axis;
  const int64_t n = xv.dim(a), after = n - begin - size;
  EDL_CHECK(begin >= 0 && size >= 1 && after >= 0)
      << "Slice [" << begin << ", " << begin + size << ") of " << n;
  if (begin == 0 && after == 0) return x;
  // Split into the pieces before, inside and after; keep the middle one.
  std::vector<int64_t> sizes;
  if (begin > 0) sizes.push_back(begin);
  sizes.push_back(size);
  if (after > 0) sizes.push_back(after);
  Tensor y = tensor::Split(xv, a, sizes)[begin > 0 ? 1 : 0];
  const Shape shape = xv.shape();
  const tensor::Device device = xv.device();
  return MakeResult(y, {x}, [a, begin, after, shape, device](const Tensor& dy) {
    // The gradient is dy with zeros where the slice left x out.
    std::vector<Tensor> parts;
    Shape piece = shape;
    if (begin > 0) {
      piece[a] = begin;
      parts.push_back(Tensor::Zeros(piece, tensor::DType::kFloat32, device));
    }
    parts.push_back(dy);
    if (after > 0) {
      piece[a] = after;
      parts.push_back(Tensor::Zeros(piece, tensor::DType::kFloat32, device));
    }
    return std::vector<Tensor>{tensor::Concat(parts, a)};
  });
}

Var Concat(const std::vector<Var>& xs, int axis) {
  EDL_CHECK(!xs.empty()) << "Concat of nothing";
  std::vector<Tensor> values;
  values.reserve(xs.size());
  for (const Var& v : xs) values.push_back(v.value());
  const int rank = values[0].rank();
  const int a = axis < 0 ? axis + rank : axis;
  std::vector<int64_t> sizes;
  sizes.reserve(xs.size());
  for (const Tensor& t : values) sizes.push_back(t.dim(a));
  return MakeResult(tensor::Concat(values, a), xs, [a, sizes = std::move(sizes)](const Tensor& dy) {
    return tensor::Split(dy, a, sizes);
  });
}

Var ZeroPad(const Var& x, int axis, int64_t before, int64_t after) {
  if (before == 0 && after == 0) return x;
  std::vector<Var> parts;
  Shape piece = x.shape();
  const tensor::Device device = x.value().device();
  if (before > 0) {
    piece[axis] = before;
    parts.emplace_back(Tensor::Zeros(piece, tensor::DType::kFloat32, device));
  }
  parts.push_back(x);
  if (after > 0) {
    piece[axis] = after;
    parts.emplace_back(Tensor::Zeros(piece, tensor::DType::kFloat32, device));
  }
  return Concat(parts, axis);
}

std::vector<Var> Split(const Var& x, int axis, const std::vector<int64_t>& sizes) {
  const Tensor& xv = x.value();
  const int a = axis < 0 ? axis + xv.rank() : axis;
  const Shape shape = xv.shape();
  const tensor::Device device = xv.device();
  return MakeResults(tensor::Split(xv, a, sizes), {x},
                     [a, shape, sizes, device](const std::vector<Tensor>& dys) {
                       std::vector<Tensor> parts = dys;
                       for (size_t i = 0; i < parts.size(); ++i) {
                         if (parts[i].defined()) continue;
                         Shape piece = shape;
                         piece[a] = sizes[i];
                         parts[i] = Tensor::Zeros(piece, tensor::DType::kFloat32, device);
                       }
                       return std::vector<Tensor>{tensor::Concat(parts, a)};
                     });
}

namespace {

// x with axes a and a + 1 swapped, from Split, Reshape and Concat: each
// piece [.., d_a, 1, ..] is the same memory as [.., 1, d_a, ..].
Var SwapAdjacent(const Var& x, int a) {
  const Shape& s = x.shape();
  std::vector<Var> pieces = Split(x, a + 1, std::vector<int64_t>(s[a + 1], 1));
  Shape moved = s;
  moved[a] = 1;
  moved[a + 1] = s[a];
  for (Var& p : pieces) p = Reshape(p, moved);
  return Concat(pieces, a);
}

}  // namespace

Var Transpose(const Var& x, const std::vector<int>& perm) {
  if (!tensor::TransposeAvailable(x.value().device())) {
    // Bubble x's axes into perm's order by adjacent swaps.
    std::vector<int> order(perm.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    Var y = x;
    for (size_t k = 0; k < perm.size(); ++k) {
      size_t at = k;
      while (order[at] != perm[k]) ++at;
      for (; at > k; --at) {
        y = SwapAdjacent(y, static_cast<int>(at) - 1);
        std::swap(order[at], order[at - 1]);
      }
    }
    return y;
  }
  std::vector<int> inverse(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = static_cast<int>(k);
  return MakeResult(tensor::Transpose(x.value(), perm), {x}, [inverse](const Tensor& dy) {
    return std::vector<Tensor>{tensor::Transpose(dy, inverse)};
  });
}

Var Reverse(const Var& x, int axis) {
  const int a = axis < 0 ? axis + x.value().rank() : axis;
  std::vector<Var> pieces = Split(x, a, std::vector<int64_t>(x.shape()[a], 1));
  std::reverse(pieces.begin(), pieces.end());
  return Concat(pieces, a);
}

Var ReduceOp(Reduce kind, const Var& x, std::vector<int> axes, bool keepdims) {
  Tensor xv = x.value();
  const std::vector<int> norm = internal::NormalizeAxes(axes, xv.rank());
  Tensor y = tensor::ReduceOp(kind, xv, norm, keepdims);
  const Shape kept = internal::KeepDimsShape(xv.shape(), norm);
  int64_t count = 1;
  for (int a : norm) count *= xv.dim(a);
  return MakeResult(y, {x}, [kind, xv, y, kept, norm, count](const Tensor& dy) {
    Tensor dyk = dy.Reshape(kept);
    switch (kind) {
      case Reduce::kSum: return std::vector<Tensor>{internal::BroadcastTo(dyk, xv.shape())};
      case Reduce::kMean:
        return std::vector<Tensor>{internal::BroadcastTo(
            tensor::Affine(dyk, 1.f / static_cast<float>(count), 0.f), xv.shape())};
      case Reduce::kMax:
      case Reduce::kMin: break;
    }
    // Max/min: the gradient is split evenly between tied extrema (as
    // TensorFlow's reduce_max). The tie mask is built on the host (device
    // operands downloaded, the mask uploaded): reduce_max/min in a model is
    // rare; an equality op would keep it on the device.
    Tensor yb = internal::BroadcastTo(y.Reshape(kept), xv.shape()).On(tensor::Device::kCPU);
    Tensor xh = xv.On(tensor::Device::kCPU);
    Tensor mask = Tensor::Empty(xv.shape());
    const float* px = xh.f32();
    const float* py = yb.f32();
    float* pm = mask.f32();
    for (int64_t i = 0; i < xv.numel(); ++i) pm[i] = px[i] == py[i] ? 1.f : 0.f;
    mask = mask.On(xv.device());
    Tensor ties = tensor::ReduceOp(Reduce::kSum, mask, norm, true);
    Tensor share = tensor::Div(dyk, ties);
    return std::vector<Tensor>{tensor::Mul(mask, share)};
  });
}

Var Sum(const Var& x) { return ReduceOp(Reduce::kSum, x, {}, false); }
Var Mean(const Var& x) { return ReduceOp(Reduce::kMean, x, {}, false); }

}  // namespace edl::nn::fn
