// Tensor operations: the public entry points of the tensor engine. Each
// function checks shapes and dtypes (EDL_CHECK: a mismatch is a bug in the
// caller, since nn/ validates user models before running them), allocates
// its outputs, and dispatches to the Backend of the inputs' device
// (tensor/backend.h). Float32 unless stated otherwise.
//
// Layouts follow Keras: images are NHWC, conv kernels HWIO
// ([kh, kw, in_channels, out_channels]), dense kernels [in, out].
//
// Thread-safety: ops may be called from several threads at once.
#pragma once

#include <array>
#include <vector>

#include "tensor/tensor.h"
#include "tensor/update_rules.h"

namespace edl::tensor {

// Sets the number of threads the CPU backend uses (oneDNN and edl's loops);
// n <= 0 means every CPU this process may use (base/cpus.h UsableCpus).
void SetNumThreads(int n);
int NumThreads();

// ---- Elementwise -------------------------------------------------------

enum class Eltwise {
  kRelu,  // alpha = negative slope (0 for plain relu)
  kSigmoid,
  kTanh,
  kGelu,      // exact (erf) form, as Keras' default approximate=False
  kGeluTanh,  // tanh approximation
  kElu,       // alpha
  kSelu,
  kSoftplus,
  kSwish,   // x * sigmoid(x)
  kLinear,  // alpha * x + beta
  kExp,
  kLog,
  kSqrt,
  kSquare,
  kAbs,
  kClip,  // clip(x, alpha, beta)
};
const char* EltwiseName(Eltwise kind);

Tensor EltwiseForward(Eltwise kind, const Tensor& x, float alpha = 0.f, float beta = 0.f);
// Gradient with respect to x, given dy and the forward input x.
Tensor EltwiseBackward(Eltwise kind, const Tensor& dy, const Tensor& x, float alpha = 0.f,
                       float beta = 0.f);

// ---- Binary with numpy broadcasting ------------------------------------

enum class Binary { kAdd, kSub, kMul, kDiv, kMax, kMin };
// Output shape is the numpy broadcast of a and b's shapes.
// REQUIRES: shapes are broadcast-compatible.
Tensor BinaryOp(Binary kind, const Tensor& a, const Tensor& b);
inline Tensor Add(const Tensor& a, const Tensor& b) { return BinaryOp(Binary::kAdd, a, b); }
inline Tensor Sub(const Tensor& a, const Tensor& b) { return BinaryOp(Binary::kSub, a, b); }
inline Tensor Mul(const Tensor& a, const Tensor& b) { return BinaryOp(Binary::kMul, a, b); }
inline Tensor Div(const Tensor& a, const Tensor& b) { return BinaryOp(Binary::kDiv, a, b); }
// y = alpha * x + beta.
Tensor Affine(const Tensor& x, float alpha, float beta);
// The broadcast shape of a and b; false if incompatible.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out);
// Sums x over the dimensions that were broadcast to turn `shape` into
// x.shape() (the backward of broadcasting). REQUIRES: shape broadcasts to x.
Tensor SumToShape(const Tensor& x, const Shape& shape);
// In place: y += alpha * x. REQUIRES: same shapes.
void AddInPlace(Tensor& y, const Tensor& x, float alpha = 1.f);

// ---- Reductions --------------------------------------------------------

enum class Reduce { kSum, kMean, kMax, kMin };
// Reduces over `axes` (negative allowed; empty means all axes).
Tensor ReduceOp(Reduce kind, const Tensor& x, std::vector<int> axes, bool keepdims = false);

// ---- Matrix products ---------------------------------------------------

// C = op(A) op(B) for 2-D A, B, or batched over a leading dimension for 3-D.
Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
// Dense layer forward: y[N, out] = x[N, in] w[in, out] (+ bias[out]).
// bias may be undefined.
Tensor DenseForward(const Tensor& x, const Tensor& w, const Tensor& bias);

// ---- Convolution and pooling (NHWC) ------------------------------------

struct Conv2DParams {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilations{1, 1};
  // top, bottom, left, right
  std::array<int64_t, 4> padding{0, 0, 0, 0};
  // Grouped convolution (Keras Conv2D groups; DepthwiseConv2D is groups =
  // C): the kernel is [kh, kw, C / groups, O] and output channel o reads
  // input channels g * C/groups .. (g + 1) * C/groups - 1, g = o / (O/groups).
  int64_t groups = 1;
};
enum class Padding { kValid, kSame };
// The explicit padding Keras/TensorFlow uses for `padding` (same puts the
// extra row/column at the bottom/right).
std::array<int64_t, 4> ComputePadding(Padding padding, int64_t in_h, int64_t in_w, int64_t kernel_h,
                                      int64_t kernel_w, std::array<int64_t, 2> strides,
                                      std::array<int64_t, 2> dilations);
// Output spatial size of a convolution or pooling window; <= 0 if the input
// is too small.
int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t pad_begin, int64_t pad_end);

// Output length of a transposed convolution along one axis, by Keras' rule
// (keras conv_utils.deconv_output_length, TF.js' deconvLength). Without
// output_padding (output_padding < 0): `valid` gives in * stride +
// max(dilated - stride, 0), `same` gives in * stride. With output_padding
// p >= 0: (in - 1) * stride + dilated - 2 * pad + p, pad = dilated / 2 for
// `same` and 0 for `valid`. dilated = (kernel - 1) * dilation + 1.
int64_t TransposedConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                 Padding padding, int64_t output_padding);

// True when the backend for `device` in this thread honours groups > 1.
bool GroupedConvAvailable(Device device);
// x [N, H, W, C], w [kh, kw, C / groups, O], bias [O] or undefined ->
// y [N, OH, OW, O].
Tensor Conv2DForward(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2DParams& p);
// dx [N, H, W, C] from dy [N, OH, OW, O].
Tensor Conv2DBackwardData(const Tensor& dy, const Tensor& w, const Shape& x_shape,
                          const Conv2DParams& p);
struct Conv2DWeightGrads {
  Tensor dw;     // [kh, kw, C, O]
  Tensor dbias;  // [O], undefined unless with_bias
};
Conv2DWeightGrads Conv2DBackwardWeights(const Tensor& dy, const Tensor& x, const Shape& w_shape,
                                        const Conv2DParams& p, bool with_bias);

enum class PoolKind { kMax, kAvg };
struct Pool2DParams {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> strides{2, 2};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // top, bottom, left, right
};
struct Pool2DResult {
  Tensor y;
  // Backend-private state the backward pass needs (e.g. max indices); may be
  // undefined. Pass it back unchanged.
  Tensor workspace;
};
// Average pooling excludes padded elements from the count (as TensorFlow).
Pool2DResult Pool2DForward(PoolKind kind, const Tensor& x, const Pool2DParams& p);
Tensor Pool2DBackward(PoolKind kind, const Tensor& dy, const Tensor& x, const Pool2DResult& forward,
                      const Pool2DParams& p);

// ---- Normalization ----------------------------------------------------

// Batch normalization over every axis but the last (channels-last).
struct BatchNormResult {
  Tensor y;
  Tensor mean;      // [C], batch statistics
  Tensor variance;  // [C], biased batch variance
};
BatchNormResult BatchNormTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                  float epsilon);
Tensor BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& mean, const Tensor& variance, float epsilon);
struct NormGrads {
  Tensor dx, dgamma, dbeta;
};
// Backward of BatchNormTraining given its batch statistics.
NormGrads BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                            const Tensor& mean, const Tensor& variance, float epsilon);

// Layer normalization over the last axis; gamma, beta [C].
struct LayerNormResult {
  Tensor y;
  Tensor mean;      // [rows]
  Tensor variance;  // [rows]
};
LayerNormResult LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 float epsilon);
NormGrads LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                            const Tensor& mean, const Tensor& variance, float epsilon);

// ---- Softmax ------------------------------------------------------------

Tensor Softmax(const Tensor& x, int axis = -1);
Tensor SoftmaxBackward(const Tensor& dy, const Tensor& y, int axis = -1);
Tensor LogSoftmax(const Tensor& x, int axis = -1);
Tensor LogSoftmaxBackward(const Tensor& dy, const Tensor& y, int axis = -1);

// ---- Shape ops ----------------------------------------------------------

// REQUIRES: all inputs agree except along axis.
Tensor Concat(const std::vector<Tensor>& xs, int axis);
// The inverse of Concat: pieces of the given sizes along axis.
std::vector<Tensor> Split(const Tensor& x, int axis, const std::vector<int64_t>& sizes);
// y[i_perm[0], ..., i_perm[r-1]] = x[i_0, ..., i_{r-1}]: y's axis k is x's
// axis perm[k] (numpy.transpose). REQUIRES: perm is a permutation of
// 0..rank-1. Float32.
Tensor Transpose(const Tensor& x, const std::vector<int>& perm);
// True when the backend for `device` in this thread has Transpose (callers
// compose it from Split and Concat otherwise).
bool TransposeAvailable(Device device);
// Converts between float32 and int64 (truncating toward zero).
Tensor Cast(const Tensor& x, DType dtype);

// A dropout mask made on `device`: each element 0 with probability rate,
// else 1 / (1 - rate), drawn from (seed, element index) alone
// (tensor/dropout_mask.h), so every device makes the same mask.
// REQUIRES: 0 <= rate < 1.
Tensor DropoutMask(const Shape& shape, double rate, uint64_t seed, Device device);

// ---- Embedding ----------------------------------------------------------

// table [V, D], ids int64 of any shape -> [ids..., D].
// REQUIRES: 0 <= id < V (callers validate user data first).
Tensor Gather(const Tensor& table, const Tensor& ids);

// A sparse gradient of (or update to) a table: rows `ids` with `values`.
// Ids may repeat; repeated rows add up.
struct SparseRows {
  Tensor ids;            // int64 [n]
  Tensor values;         // float32 [n, D]
  int64_t num_rows = 0;  // V of the dense table
};
// The sparse gradient of Gather: one row per id (ids flattened).
SparseRows GatherBackward(const Tensor& dy, const Tensor& ids, int64_t num_rows);
// Sums repeated ids; the result has unique ids in ascending order.
SparseRows Coalesce(const SparseRows& rows);
// A dense [V, D] tensor with the rows scatter-added.
Tensor Densify(const SparseRows& rows);
// In place: table[ids[i]] += alpha * values[i].
void ScatterAdd(Tensor& table, const SparseRows& rows, float alpha = 1.f);

// ---- Recurrent layers (whole sequences) ---------------------------------

// The cells, with Keras' gate order and maths (tanh activation, sigmoid
// gates). G gates: SimpleRNN 1, LSTM 4 (i, f, c, o), GRU 3 (z, r, h).
//   kGRU:            candidate = tanh(x W_h + (r * h) U_h + b_h)
//   kGRUResetAfter:  candidate = tanh(x W_h + b_h + r * (h U_h + b'_h))
enum class RnnCell { kSimpleRNN, kLSTM, kGRU, kGRUResetAfter };
inline int RnnGates(RnnCell cell) {
  return cell == RnnCell::kLSTM ? 4 : cell == RnnCell::kSimpleRNN ? 1 : 3;
}
// x [N, T, F], w_x [F, G*U], w_h [U, G*U], bias [G*U] ([4*U] for
// kGRUResetAfter: z and r biases, then b_h and b'_h). States start at zero.
struct RnnForwardResult {
  Tensor y;          // [N, T, U], h at every step
  Tensor h;          // [N, U], the last h
  Tensor c;          // [N, U], the last cell state (LSTM only)
  Tensor workspace;  // what RnnBackward needs (backend-private)
};
// True when the backend for `device` in this thread computes whole
// sequences of `cell` (the CPU backend: every cell; CUDA: all but kGRU,
// which cuDNN lacks); otherwise callers compose the steps.
bool RnnAvailable(Device device, RnnCell cell);
RnnForwardResult RnnForward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                            const Tensor& bias);
struct RnnGrads {
  Tensor dx, dw_x, dw_h, dbias;
};
// dy [N, T, U]; dh, dc [N, U] or undefined (zero).
RnnGrads RnnBackward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                     const Tensor& bias, const RnnForwardResult& forward, const Tensor& dy,
                     const Tensor& dh, const Tensor& dc);

// ---- Optimizer updates ---------------------------------------------------

// One optimizer step in place on value's device (the element rules and their
// coefficients: tensor/update_rules.h). slots: UpdateSlotCount(rule) float32
// tensors with value's numel. ids undefined: grad has value's numel (any
// shape). Otherwise ids int64 [n] of unique rows of value (REQUIRES: unique;
// range-checked when on the CPU) and grad n rows of value's row size
// (numel / dim(0)); only those rows of value and slots change. All tensors
// on one device.
void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& coefficients, Tensor& value,
                 const Tensor& grad, std::vector<Tensor>& slots, const Tensor& ids = Tensor());

}  // namespace edl::tensor
