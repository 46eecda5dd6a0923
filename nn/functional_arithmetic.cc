// Broadcasting arithmetic and matrix products (nn/functional.h). The
// gradient of a broadcast input is the output gradient summed back to the
// input's shape (tensor::SumToShape).
#include <utility>

#include "nn/functional.h"
#include "nn/functional_util.h"

namespace edl::nn::fn {
namespace {

using tensor::SumToShape;

// max/min: the gradient goes to a where a wins (ties to a, as TensorFlow)
// and to b elsewhere. The split is computed on the host: device operands
// are downloaded and da, db uploaded (Maximum/Minimum layers and ReLU's
// max_value are rare; a comparison op would keep this on the device).
Var Extremum(const Var& a, const Var& b, bool is_max) {
  Tensor y = tensor::BinaryOp(is_max ? Binary::kMax : Binary::kMin, a.value(), b.value());
  Tensor av = a.value(), bv = b.value();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return MakeResult(y, {a, b}, [av, bv, is_max, need_a, need_b](const Tensor& dy) {
    const tensor::Device device = dy.device();
    Tensor af = internal::BroadcastTo(av, dy.shape()).On(tensor::Device::kCPU);
    Tensor bf = internal::BroadcastTo(bv, dy.shape()).On(tensor::Device::kCPU);
    Tensor dyh = dy.On(tensor::Device::kCPU);
    Tensor da = Tensor::Empty(dy.shape()), db = Tensor::Empty(dy.shape());
    const float* pa = af.f32();
    const float* pb = bf.f32();
    const float* g = dyh.f32();
    float* ga = da.f32();
    float* gb = db.f32();
    const int64_t n = dy.numel();
    for (int64_t i = 0; i < n; ++i) {
      const bool a_wins = is_max ? pa[i] >= pb[i] : pa[i] <= pb[i];
      ga[i] = a_wins ? g[i] : 0.f;
      gb[i] = a_wins ? 0.f : g[i];
    }
    da = da.On(device);
    db = db.On(device);
    return std::vector<Tensor>{need_a ? SumToShape(da, av.shape()) : Tensor(),
                               need_b ? SumToShape(db, bv.shape()) : Tensor()};
  });
}

}  // namespace

Var Add(const Var& a, const Var& b) {
  Shape sa = a.shape(), sb = b.shape();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return MakeResult(tensor::Add(a.value(), b.value()), {a, b},
                    [sa = std::move(sa), sb = std::move(sb), need_a, need_b](const Tensor& dy) {
                      return std::vector<Tensor>{need_a ? SumToShape(dy, sa) : Tensor(),
                                                 need_b ? SumToShape(dy, sb) : Tensor()};
                    });
}

Var Sub(const Var& a, const Var& b) {
  Shape sa = a.shape(), sb = b.shape();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return MakeResult(tensor::Sub(a.value(), b.value()), {a, b},
                    [sa = std::move(sa), sb = std::move(sb), need_a, need_b](const Tensor& dy) {
                      return std::vector<Tensor>{
                          need_a ? SumToShape(dy, sa) : Tensor(),
                          need_b ? SumToShape(tensor::Affine(dy, -1.f, 0.f), sb) : Tensor()};
                    });
}

Var Mul(const Var& a, const Var& b) {
  Tensor av = a.value(), bv = b.value();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return MakeResult(tensor::Mul(av, bv), {a, b}, [av, bv, need_a, need_b](const Tensor& dy) {
    return std::vector<Tensor>{need_a ? SumToShape(tensor::Mul(dy, bv), av.shape()) : Tensor(),
                               need_b ? SumToShape(tensor::Mul(dy, av), bv.shape()) : Tensor()};
  });
}

Var Div(const Var& a, const Var& b) {
  Tensor av = a.value(), bv = b.value();
  Tensor y = tensor::Div(av, bv);
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return MakeResult(y, {a, b}, [av, bv, y, need_a, need_b](const Tensor& dy) {
    Tensor da, db;
    Tensor dy_over_b = tensor::Div(dy, bv);
    if (need_a) da = SumToShape(dy_over_b, av.shape());
    // d(a/b)/db = -(a/b)/b.
    if (need_b) {
      db = SumToShape(tensor::Affine(tensor::Mul(dy_over_b, y), -1.f, 0.f), bv.shape());
    }
    return std::vector<Tensor>{da, db};
  });
}

Var Maximum(const Var& a, const Var& b) { return Extremum(a, b, true); }
Var Minimum(const Var& a, const Var& b) { return Extremum(a, b, false); }

Var Affine(const Var& x, float alpha, float beta) {
  return MakeResult(tensor::Affine(x.value(), alpha, beta), {x}, [alpha](const Tensor& dy) {
    return std::vector<Tensor>{tensor::Affine(dy, alpha, 0.f)};
  });
}

Var MatMul(const Var& a, const Var& b, bool transpose_a, bool transpose_b) {
  Tensor av = a.value(), bv = b.value();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  const bool ta = transpose_a, tb = transpose_b;
  return MakeResult(tensor::MatMul(av, bv, ta, tb), {a, b},
                    [av, bv, ta, tb, need_a, need_b](const Tensor& dc) {
                      using tensor::MatMul;
                      Tensor da, db;
                      if (!ta && !tb) {  // C = A B
                        if (need_a) da = MatMul(dc, bv, false, true);
                        if (need_b) db = MatMul(av, dc, true, false);
                      } else if (ta && !tb) {  // C = A^T B
                        if (need_a) da = MatMul(bv, dc, false, true);
                        if (need_b) db = MatMul(av, dc, false, false);
                      } else if (!ta && tb) {  // C = A B^T
                        if (need_a) da = MatMul(dc, bv, false, false);
                        if (need_b) db = MatMul(dc, av, true, false);
                      } else {  // C = A^T B^T
                        if (need_a) da = MatMul(bv, dc, true, true);
                        if (need_b) db = MatMul(dc, av, true, true);
                      }
                      return std::vector<Tensor>{da, db};
                    });
}

Var Dense(const Var& x, const Var& w, const Var& b) {
  const Shape x_shape = x.shape();
  EDL_CHECK_GE(x.value().rank(), 2) << "Dense input " << tensor::ShapeString(x_shape);
  const int64_t in = w.value().dim(0);
  const int64_t out = w.value().dim(1);
  Tensor x2 = x.value().rank() == 2 ? x.value() : x.value().Reshape({-1, in});
  Tensor y = tensor::DenseForward(x2, w.value(), b.value());
  if (x.value().rank() != 2) {
    Shape y_shape = x_shape;
    y_shape.back() = out;
    y = y.Reshape(y_shape);
  }
  Tensor wv = w.value();
  const bool need_x = x.requires_grad(), need_w = w.requires_grad(), need_b = b.requires_grad();
  return MakeResult(std::move(y), {x, w, b},
                    [x2, wv, x_shape, out, need_x, need_w, need_b](const Tensor& dy) {
                      Tensor dy2 = dy.rank() == 2 ? dy : dy.Reshape({-1, out});
                      Tensor dx, dw, db;
                      if (need_x) {
                        dx = tensor::MatMul(dy2, wv, false, true);
                        if (dx.shape() != x_shape) dx = dx.Reshape(x_shape);
                      }
                      if (need_w) dw = tensor::MatMul(x2, dy2, true, false);
                      if (need_b) db = tensor::ReduceOp(Reduce::kSum, dy2, {0});
                      return std::vector<Tensor>{dx, dw, db};
                    });
}

}  // namespace edl::nn::fn
