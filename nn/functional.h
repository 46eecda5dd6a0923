// Differentiable functions over Vars: the building blocks of layers and
// losses. Each computes its value with tensor/ops.h and records its backward
// pass (nn/autograd.h). Every one is tested against finite differences.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "nn/autograd.h"
#include "tensor/ops.h"

namespace edl::nn::fn {

using tensor::Binary;
using tensor::Eltwise;
using tensor::Reduce;

// Broadcasting arithmetic (numpy rules); gradients are summed back to each
// input's shape.
Var Add(const Var& a, const Var& b);
Var Sub(const Var& a, const Var& b);
Var Mul(const Var& a, const Var& b);
Var Div(const Var& a, const Var& b);
Var Maximum(const Var& a, const Var& b);
Var Minimum(const Var& a, const Var& b);
// alpha * x + beta.
Var Affine(const Var& x, float alpha, float beta = 0.f);

Var Activation(Eltwise kind, const Var& x, float alpha = 0.f, float beta = 0.f);

Var MatMul(const Var& a, const Var& b, bool transpose_a = false, bool transpose_b = false);
// x [N, in] w [in, out] + b [out]; b may be undefined.
Var Dense(const Var& x, const Var& w, const Var& b);

Var Conv2D(const Var& x, const Var& w, const Var& b, const tensor::Conv2DParams& p);
Var Pool2D(tensor::PoolKind kind, const Var& x, const tensor::Pool2DParams& p);
// The transposed convolution (the gradient of Conv2D with respect to its
// input): x [N, h, w, C_in], w [kh, kw, C_out, C_in] -> y `y_shape`
// [N, H, W, C_out], where `p` is the convolution that maps y_shape back to
// x's shape. No bias.
Var Conv2DTranspose(const Var& x, const Var& w, const Shape& y_shape,
                    const tensor::Conv2DParams& p);

// Training: normalizes with batch statistics and updates the moving
// statistics in place (moving = moving * momentum + batch * (1 - momentum),
// with the unbiased batch variance, as Keras). Inference: uses the moving
// statistics.
Var BatchNorm(const Var& x, const Var& gamma, const Var& beta, Tensor& moving_mean,
              Tensor& moving_variance, float momentum, float epsilon, bool training);
Var LayerNorm(const Var& x, const Var& gamma, const Var& beta, float epsilon);

Var Softmax(const Var& x, int axis = -1);
Var LogSoftmax(const Var& x, int axis = -1);

Var Reshape(const Var& x, const Shape& shape);
// x[..., begin:begin + size, ...] along `axis` (negative from the end).
// REQUIRES: 0 <= begin, size >= 1, begin + size <= x.dim(axis).
Var Slice(const Var& x, int axis, int64_t begin, int64_t size);
Var Concat(const std::vector<Var>& xs, int axis);
// x with `before` and `after` zero slices added along `axis` (non-negative).
Var ZeroPad(const Var& x, int axis, int64_t before, int64_t after);
// The inverse of Concat: pieces of `sizes` along axis (summing to its size).
// Back-propagating through any subset of the pieces costs one Concat of x's
// size (not one per piece, as Slice would), so a sequence can be cut into
// its steps.
std::vector<Var> Split(const Var& x, int axis, const std::vector<int64_t>& sizes);
// numpy.transpose: y's axis k is x's axis perm[k]. On backends without a
// Transpose primitive (CUDA today), composed from Split and Concat.
Var Transpose(const Var& x, const std::vector<int>& perm);
// x with `axis` reversed (a sequence's steps, last first).
Var Reverse(const Var& x, int axis);
Var ReduceOp(Reduce kind, const Var& x, std::vector<int> axes, bool keepdims = false);
Var Sum(const Var& x);   // over all elements, -> scalar
Var Mean(const Var& x);  // over all elements, -> scalar

// Inverted dropout: in training zeroes each element with probability rate
// and scales the rest by 1/(1-rate); identity otherwise.
Var Dropout(const Var& x, float rate, std::mt19937_64& rng, bool training);

// Embedding lookup: rows of `table` for int64 `ids` -> [ids..., D]. The
// gradient is sparse and accumulates into table.sparse_grad.
Var Embedding(Parameter& table, const Tensor& ids);

}  // namespace edl::nn::fn
