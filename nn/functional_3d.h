// 3-D convolution and pooling over NDHWC volumes [N, D, H, W, C], composed
// from the 2-D primitives, so every backend (oneDNN, cuDNN, the reference)
// runs them and autograd differentiates them:
//
// * Conv3D: for each depth tap i of the kernel, the input depth slices
//   that tap reads (od * stride + i * dilation, after zero padding) are
//   stacked into a batch of N * OD images and convolved in 2-D with the
//   tap's [kh, kw, C / groups, F] kernel; the taps' outputs add up.
// * Conv3DTranspose: the adjoint, from 2-D transposed convolutions.
// * Pool3D: pooling over a box is separable: pool each depth slice over
//   (h, w), then pool the result along depth. For max pooling the first
//   maximal tap in (d, h, w) order takes the gradient, as TensorFlow; for
//   average pooling the box's valid taps are the product of each axis's
//   valid taps, so averaging per axis excludes padding exactly as
//   TensorFlow does.
#pragma once

#include <array>

#include "nn/autograd.h"
#include "tensor/ops.h"

namespace edl::nn::fn {

struct Conv3DParams {
  std::array<int64_t, 3> strides{1, 1, 1};  // depth, height, width
  std::array<int64_t, 3> dilations{1, 1, 1};
  std::array<int64_t, 6> padding{};  // front, back, top, bottom, left, right
  int64_t groups = 1;
};

struct Pool3DParams {
  std::array<int64_t, 3> kernel{2, 2, 2};
  std::array<int64_t, 3> strides{2, 2, 2};
  std::array<int64_t, 6> padding{};  // front, back, top, bottom, left, right
};

// Keras/TensorFlow explicit padding for a 3-D window (same: the extra plane,
// row or column at the back/bottom/right).
std::array<int64_t, 6> ComputePadding3D(tensor::Padding padding, const std::array<int64_t, 3>& in,
                                        const std::array<int64_t, 3>& kernel,
                                        const std::array<int64_t, 3>& strides,
                                        const std::array<int64_t, 3>& dilations);

// x [N, D, H, W, C], w [kd, kh, kw, C / groups, F], b [F] or undefined ->
// [N, OD, OH, OW, F]. REQUIRES: the output is not empty.
Var Conv3D(const Var& x, const Var& w, const Var& b, const Conv3DParams& p);

// The transposed convolution (the gradient of Conv3D with respect to its
// input): x [N, d, h, w, C_in], w [kd, kh, kw, C_out, C_in] -> y `y_shape`
// [N, D, H, W, C_out], where `p` is the convolution that maps y_shape back
// to x's shape (groups 1). No bias. Each depth tap's 2-D transposed
// convolution of every input plane lands on output plane
// od * stride + i * dilation - front padding.
Var Conv3DTranspose(const Var& x, const Var& w, const Shape& y_shape, const Conv3DParams& p);

// x [N, D, H, W, C] -> [N, OD, OH, OW, C]. REQUIRES: the output is not empty.
Var Pool3D(tensor::PoolKind kind, const Var& x, const Pool3DParams& p);

}  // namespace edl::nn::fn
