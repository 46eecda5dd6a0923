#include "nn/regularizer.h"

#include <cmath>
#include <vector>

#include "nn/keras_object.h"
#include "tensor/ops.h"

namespace edl::nn {

namespace {

// The penalty composed from ops, on w's device: l1 sum|w| + l2 sum w^2,
// gradient l1 sign(w) + 2 l2 w, scaled by the seed on the device.
Var PenaltyOnDevice(const Var& w, double l1, double l2) {
  using tensor::Eltwise;
  const Tensor& x = w.value();
  const float a = static_cast<float>(l1), b = static_cast<float>(l2);
  auto sum = [](const Tensor& t) { return tensor::ReduceOp(tensor::Reduce::kSum, t, {}); };
  Tensor value =
      tensor::Add(tensor::Affine(sum(tensor::EltwiseForward(Eltwise::kAbs, x)), a, 0.f),
                  tensor::Affine(sum(tensor::EltwiseForward(Eltwise::kSquare, x)), b, 0.f));
  if (!(w.requires_grad() && GradEnabled())) return Var(value);
  // sign(x) * l1 is |x|'s gradient for a seed of l1.
  Tensor grad =
      tensor::Add(tensor::EltwiseBackward(Eltwise::kAbs, Tensor::Full(x.shape(), a, x.device()), x),
                  tensor::Affine(x, 2.f * b, 0.f));
  return MakeResult(value, {w}, [grad = std::move(grad)](const Tensor& dy) {
    return std::vector<Tensor>{tensor::Mul(grad, dy)};
  });
}

}  // namespace

Var Regularizer::Penalty(const Var& w) const {
  if (w.value().device() != tensor::Device::kCPU) {
    return PenaltyOnDevice(w, l1, l2);
  }
  const Tensor& x = w.value();
  const float* px = x.f32();
  const int64_t n = x.numel();
  const bool want = w.requires_grad() && GradEnabled();
  Tensor grad = want ? Tensor::Empty(x.shape()) : Tensor();
  double abs_sum = 0, sq_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = px[i];
    abs_sum += std::abs(v);
    sq_sum += v * v;
    if (want) {
      grad.f32()[i] = static_cast<float>(l1 * ((v > 0) - (v < 0)) + 2 * l2 * v);
    }
  }
  Tensor value = Tensor::Scalar(static_cast<float>(l1 * abs_sum + l2 * sq_sum));
  if (!want) return Var(value);
  return MakeResult(value, {w}, [grad = std::move(grad)](const Tensor& dy) {
    const float s = dy.item();
    return std::vector<Tensor>{s == 1.f ? grad : tensor::Affine(grad, s, 0.f)};
  });
}

Result<Regularizer> RegularizerFromJson(const std::string& json_text, const std::string& where) {
  if (json_text == "null" || json_text.empty()) return Regularizer{};
  EDL_ASSIGN_OR_RETURN(internal::KerasObject o, internal::KerasObject::Parse(json_text, where));
  Regularizer r;
  const std::string& c = o.canonical();
  const bool bare = json_text.find('{') == std::string::npos;
  if (c == "l1") {
    r.l1 = 0.01;
    EDL_RETURN_IF_ERROR(o.Get("l1", &r.l1));
  } else if (c == "l2") {
    r.l2 = 0.01;
    EDL_RETURN_IF_ERROR(o.Get("l2", &r.l2));
  } else if (c == "l1l2") {
    // The string "l1_l2" is Keras' l1_l2() with 0.01 each; the L1L2 class
    // defaults to 0.
    r.l1 = r.l2 = bare ? 0.01 : 0.0;
    EDL_RETURN_IF_ERROR(o.Get("l1", &r.l1));
    EDL_RETURN_IF_ERROR(o.Get("l2", &r.l2));
  } else {
    return InvalidArgument(where + ": unknown regularizer \"" + o.class_name() +
                           "\" (known: L1, L2, L1L2)");
  }
  if (r.l1 < 0) return o.FieldError("l1", "must be >= 0");
  if (r.l2 < 0) return o.FieldError("l2", "must be >= 0");
  EDL_RETURN_IF_ERROR(o.CheckAllFieldsUsed());
  return r;
}

}  // namespace edl::nn
