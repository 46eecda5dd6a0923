// Elementwise activations, softmax and dropout (nn/functional.h).
#include <utility>

#include "nn/functional.h"

namespace edl::nn::fn {

Var Activation(Eltwise kind, const Var& x, float alpha, float beta) {
  Tensor xv = x.value();
  return MakeResult(
      tensor::EltwiseForward(kind, xv, alpha, beta), {x},
      [kind, xv, alpha, beta](const Tensor& dy) {
        return std::vector<Tensor>{tensor::EltwiseBackward(kind, dy, xv, alpha, beta)};
      });
}

Var Softmax(const Var& x, int axis) {
  Tensor y = tensor::Softmax(x.value(), axis);
  return MakeResult(y, {x}, [y, axis](const Tensor& dy) {
    return std::vector<Tensor>{tensor::SoftmaxBackward(dy, y, axis)};
  });
}

Var LogSoftmax(const Var& x, int axis) {
  Tensor y = tensor::LogSoftmax(x.value(), axis);
  return MakeResult(y, {x}, [y, axis](const Tensor& dy) {
    return std::vector<Tensor>{tensor::LogSoftmaxBackward(dy, y, axis)};
  });
}

Var Dropout(const Var& x, float rate, std::mt19937_64& rng, bool training) {
  EDL_CHECK(rate >= 0.f && rate < 1.f) << "dropout rate " << rate;
  if (!training || rate == 0.f) return x;
  // mask = 0 with probability rate, else 1 / (1 - rate), made on x's device
  // from one draw of `rng` (tensor::DropoutMask), so a run on a GPU drops
  // the same units as the same run on the CPU with nothing uploaded.
  const Tensor mask = tensor::DropoutMask(x.shape(), rate, rng(), x.value().device());
  return MakeResult(tensor::Mul(x.value(), mask), {x}, [mask](const Tensor& dy) {
    return std::vector<Tensor>{tensor::Mul(dy, mask)};
  });
}

}  // namespace edl::nn::fn
