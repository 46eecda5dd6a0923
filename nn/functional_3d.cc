#include "nn/functional_3d.h"

#include <vector>

#include "base/check.h"
#include "nn/functional.h"

namespace edl::nn::fn {

std::array<int64_t, 6> ComputePadding3D(tensor::Padding padding, const std::array<int64_t, 3>& in,
                                        const std::array<int64_t, 3>& kernel,
                                        const std::array<int64_t, 3>& strides,
                                        const std::array<int64_t, 3>& dilations) {
  // Depth pads like height does (same: the extra plane at the back).
  const std::array<int64_t, 4> d =
      tensor::ComputePadding(padding, in[0], 1, kernel[0], 1, {strides[0], 1}, {dilations[0], 1});
  const std::array<int64_t, 4> hw =
      tensor::ComputePadding(padding, in[1], in[2], kernel[1], kernel[2], {strides[1], strides[2]},
                             {dilations[1], dilations[2]});
  return {d[0], d[1], hw[0], hw[1], hw[2], hw[3]};
}

Var Conv3D(const Var& x, const Var& w, const Var& b, const Conv3DParams& p) {
  const Shape& s = x.shape();
  const Shape& k = w.shape();
  EDL_CHECK(s.size() == 5 && k.size() == 5 && s[4] == k[3] * p.groups)
      << "Conv3D: input " << tensor::ShapeString(s) << ", kernel " << tensor::ShapeString(k) << ", "
      << p.groups << " groups";
  const int64_t n = s[0], h = s[2], wd = s[3], c = s[4];
  const int64_t kd = k[0], filters = k[4];
  const Var padded = ZeroPad(x, 1, p.padding[0], p.padding[1]);
  const int64_t depth = padded.shape()[1];
  const int64_t od = tensor::ConvOutputSize(depth, kd, p.strides[0], p.dilations[0], 0, 0);
  EDL_CHECK_GT(od, 0) << "Conv3D: depth " << s[1] << " too small for the kernel";

  tensor::Conv2DParams p2;
  p2.strides = {p.strides[1], p.strides[2]};
  p2.dilations = {p.dilations[1], p.dilations[2]};
  p2.padding = {p.padding[2], p.padding[3], p.padding[4], p.padding[5]};
  p2.groups = p.groups;

  // Depth slices, cut once when a tap's slices are not one contiguous run.
  std::vector<Var> planes;
  if (p.strides[0] > 1 && od > 1) planes = Split(padded, 1, std::vector<int64_t>(depth, 1));
  const std::vector<Var> taps =
      kd == 1 ? std::vector<Var>{w} : Split(w, 0, std::vector<int64_t>(kd, 1));
  Var y;
  for (int64_t i = 0; i < kd; ++i) {
    const int64_t first = i * p.dilations[0];
    Var slab;
    if (planes.empty()) {
      slab = od == depth ? padded : Slice(padded, 1, first, od);
    } else {
      std::vector<Var> picked;
      for (int64_t o = 0; o < od; ++o) picked.push_back(planes[first + o * p.strides[0]]);
      slab = Concat(picked, 1);
    }
    slab = Reshape(slab, {n * od, h, wd, c});
    const Var kernel = Reshape(taps[i], {k[1], k[2], k[3], filters});
    const Var yi = Conv2D(slab, kernel, i == 0 ? b : Var(), p2);
    y = i == 0 ? yi : Add(y, yi);
  }
  return Reshape(y, {n, od, y.shape()[1], y.shape()[2], filters});
}

Var Conv3DTranspose(const Var& x, const Var& w, const Shape& y_shape, const Conv3DParams& p) {
  const Shape& s = x.shape();
  const Shape& k = w.shape();
  EDL_CHECK(s.size() == 5 && k.size() == 5 && y_shape.size() == 5 && s[4] == k[4] &&
            y_shape[4] == k[3] && p.groups == 1)
      << "Conv3DTranspose: input " << tensor::ShapeString(s) << ", kernel "
      << tensor::ShapeString(k) << ", output " << tensor::ShapeString(y_shape);
  const int64_t n = s[0], d = s[1], kd = k[0];
  const int64_t front = p.padding[0], depth = y_shape[1];
  tensor::Conv2DParams p2;
  p2.strides = {p.strides[1], p.strides[2]};
  p2.dilations = {p.dilations[1], p.dilations[2]};
  p2.padding = {p.padding[2], p.padding[3], p.padding[4], p.padding[5]};
  const Shape plane_shape{n, 1, y_shape[2], y_shape[3], y_shape[4]};

  const Var planes_in = Reshape(x, {n * d, s[2], s[3], s[4]});
  const std::vector<Var> taps =
      kd == 1 ? std::vector<Var>{w} : Split(w, 0, std::vector<int64_t>(kd, 1));
  // What lands on each output plane (after cropping the front padding).
  std::vector<std::vector<Var>> landed(depth);
  for (int64_t i = 0; i < kd; ++i) {
    const Var kernel = Reshape(taps[i], {k[1], k[2], k[3], k[4]});
    const Var r =
        Reshape(Conv2DTranspose(planes_in, kernel, {n * d, y_shape[2], y_shape[3], y_shape[4]}, p2),
                {n, d, y_shape[2], y_shape[3], y_shape[4]});
    const std::vector<Var> planes =
        d == 1 ? std::vector<Var>{r} : Split(r, 1, std::vector<int64_t>(d, 1));
    for (int64_t o = 0; o < d; ++o) {
      const int64_t at = o * p.strides[0] + i * p.dilations[0] - front;
      if (at >= 0 && at < depth) landed[at].push_back(planes[o]);
    }
  }
  std::vector<Var> out;
  for (int64_t at = 0; at < depth; ++at) {
    if (landed[at].empty()) {
      out.emplace_back(Tensor::Zeros(plane_shape, tensor::DType::kFloat32, x.value().device()));
      continue;
    }
    Var sum = landed[at][0];
    for (size_t j = 1; j < landed[at].size(); ++j) sum = Add(sum, landed[at][j]);
    out.push_back(sum);
  }
  return depth == 1 ? out[0] : Concat(out, 1);
}

Var Pool3D(tensor::PoolKind kind, const Var& x, const Pool3DParams& p) {
  const Shape& s = x.shape();
  EDL_CHECK_EQ(s.size(), 5u) << "Pool3D: input " << tensor::ShapeString(s);
  const int64_t n = s[0], d = s[1], c = s[4];
  tensor::Pool2DParams hw;
  hw.kernel = {p.kernel[1], p.kernel[2]};
  hw.strides = {p.strides[1], p.strides[2]};
  hw.padding = {p.padding[2], p.padding[3], p.padding[4], p.padding[5]};
  Var y = Pool2D(kind, Reshape(x, {n * d, s[2], s[3], c}), hw);
  const int64_t oh = y.shape()[1], ow = y.shape()[2];
  // Along depth: [N, D, 1, OH * OW * C] pooled by a (kd x 1) window.
  tensor::Pool2DParams depth;
  depth.kernel = {p.kernel[0], 1};
  depth.strides = {p.strides[0], 1};
  depth.padding = {p.padding[0], p.padding[1], 0, 0};
  y = Pool2D(kind, Reshape(y, {n, d, 1, oh * ow * c}), depth);
  return Reshape(y, {n, y.shape()[1], oh, ow, c});
}

}  // namespace edl::nn::fn
