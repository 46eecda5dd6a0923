#include "nn/loss_ops.h"

#include <cmath>
#include <vector>

#include "nn/losses.h"
#include "tensor/ops.h"

namespace edl::nn::internal {
namespace {

using tensor::Device;
using tensor::DType;
using tensor::Eltwise;
using tensor::Reduce;
using tensor::Tensor;

constexpr float kEps = kLossEpsilon;

Tensor Fn(Eltwise kind, const Tensor& x, float alpha = 0.f, float beta = 0.f) {
  return tensor::EltwiseForward(kind, x, alpha, beta);
}

// Sum over every element times `scale`, shape [].
Tensor ScaledSum(const Tensor& x, float scale) {
  return tensor::Affine(tensor::ReduceOp(Reduce::kSum, x, {}), scale, 0.f);
}

// Sum over the last axis, keeping it: [rows, 1].
Tensor RowSum(const Tensor& x) {
  return tensor::ReduceOp(Reduce::kSum, x, {-1}, /*keepdims=*/true);
}

// dy where lo <= x <= hi, else 0 (the clip's gradient mask).
Tensor InClipRange(const Tensor& dy, const Tensor& x, float lo, float hi) {
  return tensor::EltwiseBackward(Eltwise::kClip, dy, x, lo, hi);
}

// y_true as float32 [rows, c] on `device`.
Tensor DenseTargets(const Tensor& y_true, int64_t rows, int64_t c, Device device) {
  EDL_CHECK_EQ(y_true.numel(), rows * c)
      << "labels " << tensor::ShapeString(y_true.shape()) << " for " << rows << " rows of " << c;
  Tensor t = y_true.On(device).Reshape({rows, c});
  return t.dtype() == DType::kFloat32 ? t : tensor::Cast(t, DType::kFloat32);
}

}  // namespace

LossAndGrad SparseCrossentropyOps(const Tensor& y_pred, const Tensor& y_true, bool from_logits,
                                  bool want_grad) {
  const int64_t c = y_pred.dim(-1);
  const int64_t rows = y_pred.numel() / c;
  EDL_CHECK_EQ(y_true.numel(), rows) << "sparse labels " << tensor::ShapeString(y_true.shape())
                                     << " for " << rows << " rows of predictions";
  // One-hot rows built from the host ids, then uploaded.
  const Tensor ids = y_true.On(Device::kCPU);
  std::vector<float> one_hot(static_cast<size_t>(rows * c), 0.f);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t label = ids.dtype() == DType::kInt64 ? ids.i64()[r] : std::lround(ids.f32()[r]);
    EDL_CHECK(label >= 0 && label < c) << "label " << label << " outside [0, " << c << ")";
    one_hot[r * c + label] = 1.f;
  }
  const Tensor t = Tensor::FromVector({rows, c}, one_hot, y_pred.device());
  const Tensor x = y_pred.Reshape({rows, c});
  const float inv_rows = 1.f / static_cast<float>(rows);
  LossAndGrad out;
  if (from_logits) {
    // loss = -mean_r log softmax(x)[label]; grad = (softmax - onehot) / rows.
    const Tensor logp = tensor::LogSoftmax(x, -1);
    out.loss = ScaledSum(tensor::Mul(t, logp), -inv_rows);
    if (want_grad) {
      out.grad = tensor::Affine(tensor::Sub(Fn(Eltwise::kExp, logp), t), inv_rows, 0.f);
    }
  } else {
    // p = x[label]; loss = -mean log clip(p); grad = -1 / p / rows at the
    // label where p is inside the clip range.
    const Tensor p = RowSum(tensor::Mul(t, x));
    const Tensor pc = Fn(Eltwise::kClip, p, kEps, 1.f - kEps);
    out.loss = ScaledSum(Fn(Eltwise::kLog, pc), -inv_rows);
    if (want_grad) {
      const Tensor dp = tensor::Div(Tensor::Full(p.shape(), -inv_rows, p.device()), pc);
      out.grad = tensor::Mul(t, InClipRange(dp, p, kEps, 1.f - kEps));
    }
  }
  if (out.grad.defined()) out.grad = out.grad.Reshape(y_pred.shape());
  return out;
}

LossAndGrad CrossentropyOps(const Tensor& y_pred, const Tensor& y_true, bool from_logits,
                            float label_smoothing, bool want_grad) {
  const int64_t c = y_pred.dim(-1);
  const int64_t rows = y_pred.numel() / c;
  const Tensor x = y_pred.Reshape({rows, c});
  Tensor t = DenseTargets(y_true, rows, c, y_pred.device());
  if (label_smoothing != 0.f) {
    t = tensor::Affine(t, 1.f - label_smoothing, label_smoothing / static_cast<float>(c));
  }
  const float inv_rows = 1.f / static_cast<float>(rows);
  LossAndGrad out;
  if (from_logits) {
    // -sum t log softmax(x); d/dx = sum(t) softmax - t.
    const Tensor logp = tensor::LogSoftmax(x, -1);
    out.loss = ScaledSum(tensor::Mul(t, logp), -inv_rows);
    if (want_grad) {
      const Tensor softmax = Fn(Eltwise::kExp, logp);
      out.grad = tensor::Affine(tensor::Sub(tensor::Mul(RowSum(t), softmax), t), inv_rows, 0.f);
    }
  } else {
    // o = x / sum(x); loss = -sum t log clip(o); with g = -t / o inside the
    // clip range: d/dx = (g - sum(g o)) / sum(x).
    const Tensor s = RowSum(x);
    const Tensor o = tensor::Div(x, s);
    const Tensor oc = Fn(Eltwise::kClip, o, kEps, 1.f - kEps);
    out.loss = ScaledSum(tensor::Mul(t, Fn(Eltwise::kLog, oc)), -inv_rows);
    if (want_grad) {
      const Tensor g =
          InClipRange(tensor::Div(tensor::Affine(t, -1.f, 0.f), oc), o, kEps, 1.f - kEps);
      const Tensor dot = RowSum(tensor::Mul(g, o));
      out.grad = tensor::Affine(tensor::Div(tensor::Sub(g, dot), s), inv_rows, 0.f);
    }
  }
  if (out.grad.defined()) out.grad = out.grad.Reshape(y_pred.shape());
  return out;
}

LossAndGrad BinaryCrossentropyOps(const Tensor& y_pred, const Tensor& y_true, bool from_logits,
                                  float label_smoothing, bool want_grad) {
  const int64_t n = y_pred.numel();
  const Tensor v = y_pred.Reshape({n});
  const Tensor z = tensor::Affine(DenseTargets(y_true, n, 1, y_pred.device()).Reshape({n}),
                                  1.f - label_smoothing, 0.5f * label_smoothing);
  const float inv_n = 1.f / static_cast<float>(n);
  LossAndGrad out;
  if (from_logits) {
    // max(v, 0) - v z + log(1 + exp(-|v|)) = softplus(v) - v z;
    // d/dv = sigmoid(v) - z.
    out.loss = ScaledSum(tensor::Sub(Fn(Eltwise::kSoftplus, v), tensor::Mul(v, z)), inv_n);
    if (want_grad) {
      out.grad = tensor::Affine(tensor::Sub(Fn(Eltwise::kSigmoid, v), z), inv_n, 0.f);
    }
  } else {
    // o = clip(v); loss = -(z log(o + eps) + (1 - z) log(1 - o + eps)).
    const Tensor o = Fn(Eltwise::kClip, v, kEps, 1.f - kEps);
    const Tensor a = tensor::Affine(o, 1.f, kEps);
    const Tensor b = tensor::Affine(o, -1.f, 1.f + kEps);
    const Tensor not_z = tensor::Affine(z, -1.f, 1.f);
    out.loss = ScaledSum(
        tensor::Add(tensor::Mul(z, Fn(Eltwise::kLog, a)), tensor::Mul(not_z, Fn(Eltwise::kLog, b))),
        -inv_n);
    if (want_grad) {
      const Tensor g = tensor::Sub(tensor::Div(not_z, b), tensor::Div(z, a));
      out.grad = tensor::Affine(InClipRange(g, v, kEps, 1.f - kEps), inv_n, 0.f);
    }
  }
  if (out.grad.defined()) out.grad = out.grad.Reshape(y_pred.shape());
  return out;
}

LossAndGrad RegressionOps(RegressionKind kind, float delta, const Tensor& y_pred,
                          const Tensor& y_true, bool want_grad) {
  const int64_t n = y_pred.numel();
  const Tensor e =
      tensor::Sub(y_pred.Reshape({n}), DenseTargets(y_true, n, 1, y_pred.device()).Reshape({n}));
  const float inv_n = 1.f / static_cast<float>(n);
  LossAndGrad out;
  switch (kind) {
    case RegressionKind::kSquared:
      out.loss = ScaledSum(Fn(Eltwise::kSquare, e), inv_n);
      if (want_grad) out.grad = tensor::Affine(e, 2.f * inv_n, 0.f);
      break;
    case RegressionKind::kAbsolute:
      out.loss = ScaledSum(Fn(Eltwise::kAbs, e), inv_n);
      if (want_grad) {
        // sign(e) / n: the gradient of |e| with a seed of 1 / n.
        out.grad =
            tensor::EltwiseBackward(Eltwise::kAbs, Tensor::Full(e.shape(), inv_n, e.device()), e);
      }
      break;
    case RegressionKind::kHuber: {
      // With c = clip(e, -d, d): 0.5 c^2 + d (|e| - |c|); d/de = c.
      const Tensor ce = Fn(Eltwise::kClip, e, -delta, delta);
      const Tensor outside = tensor::Sub(Fn(Eltwise::kAbs, e), Fn(Eltwise::kAbs, ce));
      out.loss = ScaledSum(tensor::Add(tensor::Affine(Fn(Eltwise::kSquare, ce), 0.5f, 0.f),
                                       tensor::Affine(outside, delta, 0.f)),
                           inv_n);
      if (want_grad) out.grad = tensor::Affine(ce, inv_n, 0.f);
      break;
    }
  }
  if (out.grad.defined()) out.grad = out.grad.Reshape(y_pred.shape());
  return out;
}

}  // namespace edl::nn::internal
