// Gradient clipping as Keras' clipvalue / clipnorm: elementwise to
// [-clipvalue, clipvalue], then the whole gradient scaled to L2 norm
// <= clipnorm. A value <= 0 turns that clipping off.
//
// ClipGradient runs host loops on CPU tensors (norm accumulated in double;
// what the parameter server and CPU training have always computed) and
// ClipGradientWithOps composes tensor ops, which stay on the tensor's device
// without a host sync (squares summed in float, then reduced; a NaN norm
// yields a NaN gradient). Both return a new tensor on grad's device.
// Thread-safe.
#pragma once

#include "tensor/tensor.h"

namespace edl::nn::optim {

tensor::Tensor ClipGradient(const tensor::Tensor& grad, double clipvalue, double clipnorm);
tensor::Tensor ClipGradientWithOps(const tensor::Tensor& grad, double clipvalue, double clipnorm);

}  // namespace edl::nn::optim
