// Convolution and pooling (nn/functional.h), NHWC with HWIO kernels.
#include <utility>

#include "nn/functional.h"

namespace edl::nn::fn {

Var Conv2D(const Var& x, const Var& w, const Var& b, const tensor::Conv2DParams& p) {
  if (p.groups > 1 && !tensor::GroupedConvAvailable(x.value().device())) {
    // One convolution per group of channels.
    const int64_t g = p.groups, in = x.shape()[3] / g, out = w.shape()[3] / g;
    std::vector<Var> xs = Split(x, 3, std::vector<int64_t>(g, in));
    std::vector<Var> ws = Split(w, 3, std::vector<int64_t>(g, out));
    std::vector<Var> bs =
        b.defined() ? Split(b, 0, std::vector<int64_t>(g, out)) : std::vector<Var>(g);
    tensor::Conv2DParams single = p;
    single.groups = 1;
    std::vector<Var> ys;
    for (int64_t i = 0; i < g; ++i) ys.push_back(Conv2D(xs[i], ws[i], bs[i], single));
    return Concat(ys, 3);
  }
  Tensor xv = x.value(), wv = w.value();
  const bool need_x = x.requires_grad(), need_w = w.requires_grad(), need_b = b.requires_grad();
  return MakeResult(
      tensor::Conv2DForward(xv, wv, b.value(), p), {x, w, b},
      [xv, wv, p, need_x, need_w, need_b](const Tensor& dy) {
        Tensor dx;
        if (need_x) dx = tensor::Conv2DBackwardData(dy, wv, xv.shape(), p);
        tensor::Conv2DWeightGrads g;
        if (need_w || need_b) {
          g = tensor::Conv2DBackwardWeights(dy, xv, wv.shape(), p, need_b);
        }
        return std::vector<Tensor>{dx, need_w ? g.dw : Tensor(), need_b ? g.dbias : Tensor()};
      });
}

Var Conv2DTranspose(const Var& x, const Var& w, const Shape& y_shape,
                    const tensor::Conv2DParams& p) {
  Tensor xv = x.value(), wv = w.value();
  const bool need_x = x.requires_grad(), need_w = w.requires_grad();
  return MakeResult(tensor::Conv2DBackwardData(xv, wv, y_shape, p), {x, w},
                    [xv, wv, p, need_x, need_w](const Tensor& dy) {
                      // y = conv^T(x, w): dx = conv(dy, w); dw is the weight
                      // gradient of conv(dy, .) against output gradient x.
                      Tensor dx, dw;
                      if (need_x) dx = tensor::Conv2DForward(dy, wv, Tensor(), p);
                      if (need_w) {
                        dw = tensor::Conv2DBackwardWeights(xv, dy, wv.shape(), p, false).dw;
                      }
                      return std::vector<Tensor>{dx, dw};
                    });
}

Var Pool2D(tensor::PoolKind kind, const Var& x, const tensor::Pool2DParams& p) {
  Tensor xv = x.value();
  tensor::Pool2DResult forward = tensor::Pool2DForward(kind, xv, p);
  Tensor y = forward.y;
  return MakeResult(std::move(y), {x},
                    [kind, xv, forward = std::move(forward), p](const Tensor& dy) {
                      return std::vector<Tensor>{tensor::Pool2DBackward(kind, dy, xv, forward, p)};
                    });
}

}  // namespace edl::nn::fn
