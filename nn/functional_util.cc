#include "nn/functional_util.h"

#include <algorithm>

#include "base/check.h"

namespace edl::nn::fn::internal {

using tensor::Shape;
using tensor::Tensor;

Tensor BroadcastTo(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return tensor::Add(Tensor::Zeros(shape, tensor::DType::kFloat32, x.device()), x);
}

Tensor Ones(const Shape& shape, tensor::Device device) { return Tensor::Full(shape, 1.f, device); }

std::vector<int> NormalizeAxes(std::vector<int> axes, int rank) {
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  for (int& a : axes) {
    if (a < 0) a += rank;
    EDL_CHECK(a >= 0 && a < rank) << "axis out of range for rank " << rank;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Shape KeepDimsShape(const Shape& x, const std::vector<int>& axes) {
  Shape out = x;
  for (int a : axes) out[a] = 1;
  return out;
}

}  // namespace edl::nn::fn::internal
