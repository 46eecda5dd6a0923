// The Keras losses (nn/losses.h) composed from tensor ops, for predictions
// on an accelerator: the loss and its gradient are computed where y_pred
// lives, with no host round trip (the CPU keeps the fused double-precision
// loops of losses.cc, which these match to float rounding).
//
// Every function returns the mean loss as a scalar tensor (shape []) and,
// when `want_grad`, d(loss)/d(y_pred), both on y_pred's device. Labels are
// given on any device and moved to y_pred's; sparse class ids are read on
// the host (they come from the host batch) and uploaded as one-hot rows.
//
// Formulas as tf.keras.backend (TF 2.x); see losses.cc.
#pragma once

#include "tensor/tensor.h"

namespace edl::nn::internal {

struct LossAndGrad {
  tensor::Tensor loss;  // []
  tensor::Tensor grad;  // y_pred's shape; undefined unless want_grad
};

// y_true: class ids, one per row of y_pred [.., C] (int64, or float ids).
LossAndGrad SparseCrossentropyOps(const tensor::Tensor& y_pred, const tensor::Tensor& y_true,
                                  bool from_logits, bool want_grad);
// y_true: float32 targets with y_pred's element count.
LossAndGrad CrossentropyOps(const tensor::Tensor& y_pred, const tensor::Tensor& y_true,
                            bool from_logits, float label_smoothing, bool want_grad);
LossAndGrad BinaryCrossentropyOps(const tensor::Tensor& y_pred, const tensor::Tensor& y_true,
                                  bool from_logits, float label_smoothing, bool want_grad);

enum class RegressionKind { kSquared, kAbsolute, kHuber };
LossAndGrad RegressionOps(RegressionKind kind, float delta, const tensor::Tensor& y_pred,
                          const tensor::Tensor& y_true, bool want_grad);

}  // namespace edl::nn::internal
