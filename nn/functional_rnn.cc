#include "nn/functional_rnn.h"

#include "nn/functional.h"

namespace edl::nn::fn {
namespace {

// The bias in the primitive's layout: reset-after GRU's [2, 3U] Keras bias
// becomes [b_z + b'_z, b_r + b'_r, b_h, b'_h].
Var PrimitiveBias(tensor::RnnCell cell, const Var& bias, int64_t units, tensor::Device device) {
  const int64_t gates = tensor::RnnGates(cell);
  if (!bias.defined()) {
    const int64_t n = (cell == tensor::RnnCell::kGRUResetAfter ? 4 : gates) * units;
    return Var(Tensor::Zeros({n}, tensor::DType::kFloat32, device));
  }
  if (cell != tensor::RnnCell::kGRUResetAfter) return bias;
  std::vector<Var> rows = Split(bias, 0, {1, 1});
  std::vector<Var> in = Split(Reshape(rows[0], {3 * units}), 0, {2 * units, units});
  std::vector<Var> rec = Split(Reshape(rows[1], {3 * units}), 0, {2 * units, units});
  return Concat({Add(in[0], rec[0]), in[1], rec[1]}, 0);
}

}  // namespace

bool RnnPrimitiveAvailable(tensor::Device device, tensor::RnnCell cell) {
  return tensor::RnnAvailable(device, cell);
}

std::vector<Var> Rnn(tensor::RnnCell cell, bool reverse, const Var& x, const Var& kernel,
                     const Var& recurrent, const Var& bias) {
  const int64_t units = recurrent.shape()[0];
  Var input = reverse ? Reverse(x, 1) : x;
  Var b = PrimitiveBias(cell, bias, units, x.value().device());
  auto forward = std::make_shared<tensor::RnnForwardResult>(
      tensor::RnnForward(cell, input.value(), kernel.value(), recurrent.value(), b.value()));
  std::vector<Tensor> values{forward->y, forward->h};
  if (cell == tensor::RnnCell::kLSTM) values.push_back(forward->c);
  const Tensor xv = input.value(), wx = kernel.value(), wh = recurrent.value(), bv = b.value();
  return MakeResults(values, {input, kernel, recurrent, b},
                     [cell, forward, xv, wx, wh, bv](const std::vector<Tensor>& dys) {
                       const Tensor& y = forward->y;
                       Tensor dy = dys[0];
                       if (!dy.defined()) dy = Tensor::Zeros(y.shape(), y.dtype(), y.device());
                       tensor::RnnGrads g =
                           tensor::RnnBackward(cell, xv, wx, wh, bv, *forward, dy, dys[1],
                                               dys.size() > 2 ? dys[2] : Tensor());
                       return std::vector<Tensor>{g.dx, g.dw_x, g.dw_h, g.dbias};
                     });
}

}  // namespace edl::nn::fn
