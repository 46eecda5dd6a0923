// Small helpers shared by the nn/functional*.cc files (not a public API).
#pragma once

#include <vector>

#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace edl::nn::fn::internal {

// x broadcast (numpy rules) to `shape`; x itself when shapes agree.
tensor::Tensor BroadcastTo(const tensor::Tensor& x, const tensor::Shape& shape);
// A float tensor of ones on `device`.
tensor::Tensor Ones(const tensor::Shape& shape, tensor::Device device);
// Normalizes axes (negative, empty = all) against rank: sorted, unique.
std::vector<int> NormalizeAxes(std::vector<int> axes, int rank);
// The shape of x reduced over axes with keepdims.
tensor::Shape KeepDimsShape(const tensor::Shape& x, const std::vector<int>& axes);

}  // namespace edl::nn::fn::internal
