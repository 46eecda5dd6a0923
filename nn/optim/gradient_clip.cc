#include "nn/optim/gradient_clip.h"

#include <algorithm>
#include <cmath>

#include "tensor/ops.h"

namespace edl::nn::optim {

using tensor::Tensor;

Tensor ClipGradient(const Tensor& grad, double clipvalue, double clipnorm) {
  if (grad.device() != tensor::Device::kCPU) {
    return ClipGradientWithOps(grad, clipvalue, clipnorm);
  }
  Tensor out = grad.Clone();
  float* g = out.f32();
  const int64_t n = out.numel();
  if (clipvalue > 0) {
    const float c = static_cast<float>(clipvalue);
    for (int64_t i = 0; i < n; ++i) g[i] = std::clamp(g[i], -c, c);
  }
  if (clipnorm > 0) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double{g[i]} * g[i];
    const double norm = std::sqrt(sum);
    if (norm > clipnorm) {
      const float scale = static_cast<float>(clipnorm / norm);
      for (int64_t i = 0; i < n; ++i) g[i] *= scale;
    }
  }
  return out;
}

Tensor ClipGradientWithOps(const Tensor& grad, double clipvalue, double clipnorm) {
  const float c = static_cast<float>(clipvalue);
  Tensor out =
      clipvalue > 0 ? tensor::EltwiseForward(tensor::Eltwise::kClip, grad, -c, c) : grad.Clone();
  if (clipnorm > 0 && out.numel() > 0) {
    // scale = min(1, clipnorm / norm): 1 for a zero norm (clipnorm / 0 = inf).
    const Tensor norm = tensor::EltwiseForward(
        tensor::Eltwise::kSqrt,
        tensor::ReduceOp(tensor::Reduce::kSum,
                         tensor::EltwiseForward(tensor::Eltwise::kSquare, out), {}));
    const Tensor limit = Tensor::Full({}, static_cast<float>(clipnorm)).To(out.device());
    const Tensor scale =
        tensor::EltwiseForward(tensor::Eltwise::kClip, tensor::Div(limit, norm), 0.f, 1.f);
    out = tensor::Mul(out, scale);
  }
  return out;
}

}  // namespace edl::nn::optim
