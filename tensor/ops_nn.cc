// ops.h: convolution, pooling, normalization and softmax. Checks, allocates,
// dispatches to the Backend of the inputs' device.
#include <algorithm>

#include "tensor/backend.h"
#include "tensor/ops.h"
#include "tensor/ops_util.h"

namespace edl::tensor {

using internal::CheckFloat;
using internal::CheckSameDevice;
using internal::CheckSameShape;
using internal::NormalizeAxis;

namespace {

void CheckWindow(const std::array<int64_t, 2>& strides, const std::array<int64_t, 2>& dilations,
                 const std::array<int64_t, 4>& padding, const char* op) {
  for (int i = 0; i < 2; ++i) {
    EDL_CHECK_GE(strides[i], 1) << op << ": strides";
    EDL_CHECK_GE(dilations[i], 1) << op << ": dilations";
  }
  for (int i = 0; i < 4; ++i) EDL_CHECK_GE(padding[i], 0) << op << ": padding";
}

// The output shape of a convolution of x_shape by w_shape.
Shape ConvOutputShape(const Shape& x_shape, const Shape& w_shape, const Conv2DParams& p,
                      const char* op) {
  EDL_CHECK(x_shape.size() == 4 && w_shape.size() == 4)
      << op << ": x " << ShapeString(x_shape) << " w " << ShapeString(w_shape);
  EDL_CHECK(p.groups >= 1 && x_shape[3] % p.groups == 0 && w_shape[3] % p.groups == 0)
      << op << ": " << p.groups << " groups for x " << ShapeString(x_shape) << " and w "
      << ShapeString(w_shape);
  EDL_CHECK_EQ(x_shape[3] / p.groups, w_shape[2])
      << op << ": input channels of x " << ShapeString(x_shape) << " and w " << ShapeString(w_shape)
      << " (" << p.groups << " groups)";
  CheckWindow(p.strides, p.dilations, p.padding, op);
  int64_t oh = ConvOutputSize(x_shape[1], w_shape[0], p.strides[0], p.dilations[0], p.padding[0],
                              p.padding[1]);
  int64_t ow = ConvOutputSize(x_shape[2], w_shape[1], p.strides[1], p.dilations[1], p.padding[2],
                              p.padding[3]);
  EDL_CHECK(oh > 0 && ow > 0) << op << ": input " << ShapeString(x_shape)
                              << " too small for kernel " << ShapeString(w_shape);
  return {x_shape[0], oh, ow, w_shape[3]};
}

Shape PoolOutputShape(const Shape& x_shape, const Pool2DParams& p, const char* op) {
  EDL_CHECK_EQ(x_shape.size(), 4u) << op << ": x " << ShapeString(x_shape);
  CheckWindow(p.strides, {1, 1}, p.padding, op);
  EDL_CHECK(p.kernel[0] >= 1 && p.kernel[1] >= 1) << op << ": kernel";
  EDL_CHECK(p.padding[0] < p.kernel[0] && p.padding[1] < p.kernel[0] &&
            p.padding[2] < p.kernel[1] && p.padding[3] < p.kernel[1])
      << op << ": padding must be smaller than the window";
  int64_t oh = ConvOutputSize(x_shape[1], p.kernel[0], p.strides[0], 1, p.padding[0], p.padding[1]);
  int64_t ow = ConvOutputSize(x_shape[2], p.kernel[1], p.strides[1], 1, p.padding[2], p.padding[3]);
  EDL_CHECK(oh > 0 && ow > 0) << op << ": input " << ShapeString(x_shape)
                              << " too small for the window";
  return {x_shape[0], oh, ow, x_shape[3]};
}

// gamma/beta may be undefined: then ones/zeros of [C].
Tensor OrFull(const Tensor& t, int64_t c, float value, Device device, const char* op,
              const char* arg) {
  if (!t.defined()) return Tensor::Full({c}, value, device);
  CheckFloat(t, op, arg);
  EDL_CHECK(t.rank() == 1 && t.dim(0) == c)
      << op << ": " << arg << " " << ShapeString(t.shape()) << " for " << c << " channels";
  return t;
}

void CheckVector(const Tensor& t, int64_t n, const char* op, const char* arg) {
  CheckFloat(t, op, arg);
  EDL_CHECK(t.rank() == 1 && t.dim(0) == n)
      << op << ": " << arg << " " << ShapeString(t.shape()) << ", expected [" << n << "]";
}

}  // namespace

std::array<int64_t, 4> ComputePadding(Padding padding, int64_t in_h, int64_t in_w, int64_t kernel_h,
                                      int64_t kernel_w, std::array<int64_t, 2> strides,
                                      std::array<int64_t, 2> dilations) {
  if (padding == Padding::kValid) return {0, 0, 0, 0};
  auto total = [](int64_t in, int64_t k, int64_t s, int64_t d) {
    int64_t out = (in + s - 1) / s;
    int64_t effective = (k - 1) * d + 1;
    return std::max<int64_t>((out - 1) * s + effective - in, 0);
  };
  int64_t th = total(in_h, kernel_h, strides[0], dilations[0]);
  int64_t tw = total(in_w, kernel_w, strides[1], dilations[1]);
  return {th / 2, th - th / 2, tw / 2, tw - tw / 2};
}

int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t pad_begin, int64_t pad_end) {
  int64_t effective = (kernel - 1) * dilation + 1;
  int64_t span = in + pad_begin + pad_end - effective;
  if (span < 0) return 0;
  return span / stride + 1;
}

int64_t TransposedConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                 Padding padding, int64_t output_padding) {
  const int64_t dilated = (kernel - 1) * dilation + 1;
  if (output_padding < 0) {
    return padding == Padding::kSame ? in * stride
                                     : in * stride + std::max<int64_t>(dilated - stride, 0);
  }
  const int64_t pad = padding == Padding::kSame ? dilated / 2 : 0;
  return (in - 1) * stride + dilated - 2 * pad + output_padding;
}

bool GroupedConvAvailable(Device device) { return BackendFor(device).GroupedConv(); }

Tensor Conv2DForward(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2DParams& p) {
  CheckFloat(x, "Conv2DForward", "x");
  CheckFloat(w, "Conv2DForward", "w");
  CheckSameDevice(x, w, "Conv2DForward");
  Shape shape = ConvOutputShape(x.shape(), w.shape(), p, "Conv2DForward");
  if (bias.defined()) CheckVector(bias, w.dim(3), "Conv2DForward", "bias");
  Tensor y = Tensor::Empty(shape, DType::kFloat32, x.device());
  if (y.numel() == 0) return y;
  BackendFor(x.device()).Conv2DForward(x, w, bias, p, y);
  return y;
}

Tensor Conv2DBackwardData(const Tensor& dy, const Tensor& w, const Shape& x_shape,
                          const Conv2DParams& p) {
  CheckFloat(dy, "Conv2DBackwardData", "dy");
  CheckFloat(w, "Conv2DBackwardData", "w");
  CheckSameDevice(dy, w, "Conv2DBackwardData");
  Shape shape = ConvOutputShape(x_shape, w.shape(), p, "Conv2DBackwardData");
  EDL_CHECK(dy.shape() == shape) << "Conv2DBackwardData: dy " << ShapeString(dy.shape())
                                 << ", expected " << ShapeString(shape);
  Tensor dx = Tensor::Empty(x_shape, DType::kFloat32, dy.device());
  if (dx.numel() == 0) return dx;
  if (dy.numel() == 0) {
    dx.Fill(0.f);
    return dx;
  }
  BackendFor(dy.device()).Conv2DBackwardData(dy, w, p, dx);
  return dx;
}

Conv2DWeightGrads Conv2DBackwardWeights(const Tensor& dy, const Tensor& x, const Shape& w_shape,
                                        const Conv2DParams& p, bool with_bias) {
  CheckFloat(dy, "Conv2DBackwardWeights", "dy");
  CheckFloat(x, "Conv2DBackwardWeights", "x");
  CheckSameDevice(dy, x, "Conv2DBackwardWeights");
  Shape shape = ConvOutputShape(x.shape(), w_shape, p, "Conv2DBackwardWeights");
  EDL_CHECK(dy.shape() == shape) << "Conv2DBackwardWeights: dy " << ShapeString(dy.shape())
                                 << ", expected " << ShapeString(shape);
  Conv2DWeightGrads g;
  g.dw = Tensor::Empty(w_shape, DType::kFloat32, x.device());
  if (with_bias) g.dbias = Tensor::Empty({w_shape[3]}, DType::kFloat32, x.device());
  if (g.dw.numel() == 0) {
    if (with_bias) g.dbias.Fill(0.f);
    return g;
  }
  if (dy.numel() == 0) {  // empty batch
    g.dw.Fill(0.f);
    if (with_bias) g.dbias.Fill(0.f);
    return g;
  }
  BackendFor(x.device()).Conv2DBackwardWeights(dy, x, p, g.dw, g.dbias);
  return g;
}

Pool2DResult Pool2DForward(PoolKind kind, const Tensor& x, const Pool2DParams& p) {
  CheckFloat(x, "Pool2DForward", "x");
  Shape shape = PoolOutputShape(x.shape(), p, "Pool2DForward");
  Pool2DResult r;
  r.y = Tensor::Empty(shape, DType::kFloat32, x.device());
  if (r.y.numel() == 0) return r;
  r.workspace = BackendFor(x.device()).Pool2DForward(kind, x, p, r.y);
  return r;
}

Tensor Pool2DBackward(PoolKind kind, const Tensor& dy, const Tensor& x, const Pool2DResult& forward,
                      const Pool2DParams& p) {
  CheckFloat(dy, "Pool2DBackward", "dy");
  CheckFloat(x, "Pool2DBackward", "x");
  CheckSameDevice(dy, x, "Pool2DBackward");
  Shape shape = PoolOutputShape(x.shape(), p, "Pool2DBackward");
  EDL_CHECK(dy.shape() == shape) << "Pool2DBackward: dy " << ShapeString(dy.shape())
                                 << ", expected " << ShapeString(shape);
  Tensor dx = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  if (dx.numel() == 0) return dx;
  BackendFor(x.device()).Pool2DBackward(kind, dy, x, forward.workspace, p, dx);
  return dx;
}

BatchNormResult BatchNormTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                  float epsilon) {
  CheckFloat(x, "BatchNormTraining", "x");
  EDL_CHECK_GE(x.rank(), 1);
  const int64_t c = x.dim(-1);
  Tensor g = OrFull(gamma, c, 1.f, x.device(), "BatchNormTraining", "gamma");
  Tensor b = OrFull(beta, c, 0.f, x.device(), "BatchNormTraining", "beta");
  BatchNormResult r;
  r.y = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  r.mean = Tensor::Empty({c}, DType::kFloat32, x.device());
  r.variance = Tensor::Empty({c}, DType::kFloat32, x.device());
  if (c == 0) return r;
  if (x.numel() == 0) {
    r.mean.Fill(0.f);
    r.variance.Fill(0.f);
    return r;
  }
  BackendFor(x.device())
      .BatchNormTraining(x.Reshape({-1, c}), g, b, epsilon, r.y, r.mean, r.variance);
  return r;
}

Tensor BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& mean, const Tensor& variance, float epsilon) {
  CheckFloat(x, "BatchNormInference", "x");
  EDL_CHECK_GE(x.rank(), 1);
  const int64_t c = x.dim(-1);
  Tensor g = OrFull(gamma, c, 1.f, x.device(), "BatchNormInference", "gamma");
  Tensor b = OrFull(beta, c, 0.f, x.device(), "BatchNormInference", "beta");
  CheckVector(mean, c, "BatchNormInference", "mean");
  CheckVector(variance, c, "BatchNormInference", "variance");
  Tensor y = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  if (x.numel() == 0) return y;
  BackendFor(x.device()).BatchNormInference(x.Reshape({-1, c}), g, b, mean, variance, epsilon, y);
  return y;
}

NormGrads BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                            const Tensor& mean, const Tensor& variance, float epsilon) {
  CheckFloat(dy, "BatchNormBackward", "dy");
  CheckFloat(x, "BatchNormBackward", "x");
  CheckSameShape(dy, x, "BatchNormBackward");
  EDL_CHECK_GE(x.rank(), 1);
  const int64_t c = x.dim(-1);
  Tensor g = OrFull(gamma, c, 1.f, x.device(), "BatchNormBackward", "gamma");
  CheckVector(mean, c, "BatchNormBackward", "mean");
  CheckVector(variance, c, "BatchNormBackward", "variance");
  NormGrads r;
  r.dx = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  r.dgamma = Tensor::Empty({c}, DType::kFloat32, x.device());
  r.dbeta = Tensor::Empty({c}, DType::kFloat32, x.device());
  if (c == 0) return r;
  if (x.numel() == 0) {
    r.dgamma.Fill(0.f);
    r.dbeta.Fill(0.f);
    return r;
  }
  BackendFor(x.device())
      .BatchNormBackward(dy.Reshape({-1, c}), x.Reshape({-1, c}), g, mean, variance, epsilon, r.dx,
                         r.dgamma, r.dbeta);
  return r;
}

LayerNormResult LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 float epsilon) {
  CheckFloat(x, "LayerNormForward", "x");
  EDL_CHECK_GE(x.rank(), 1);
  const int64_t c = x.dim(-1);
  EDL_CHECK_GT(c, 0) << "LayerNormForward: empty last axis";
  Tensor g = OrFull(gamma, c, 1.f, x.device(), "LayerNormForward", "gamma");
  Tensor b = OrFull(beta, c, 0.f, x.device(), "LayerNormForward", "beta");
  const int64_t rows = x.numel() / c;
  LayerNormResult r;
  r.y = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  r.mean = Tensor::Empty({rows}, DType::kFloat32, x.device());
  r.variance = Tensor::Empty({rows}, DType::kFloat32, x.device());
  if (rows == 0) return r;
  BackendFor(x.device())
      .LayerNormForward(x.Reshape({rows, c}), g, b, epsilon, r.y, r.mean, r.variance);
  return r;
}

NormGrads LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                            const Tensor& mean, const Tensor& variance, float epsilon) {
  CheckFloat(dy, "LayerNormBackward", "dy");
  CheckFloat(x, "LayerNormBackward", "x");
  CheckSameShape(dy, x, "LayerNormBackward");
  EDL_CHECK_GE(x.rank(), 1);
  const int64_t c = x.dim(-1);
  EDL_CHECK_GT(c, 0) << "LayerNormBackward: empty last axis";
  const int64_t rows = x.numel() / c;
  Tensor g = OrFull(gamma, c, 1.f, x.device(), "LayerNormBackward", "gamma");
  CheckVector(mean, rows, "LayerNormBackward", "mean");
  CheckVector(variance, rows, "LayerNormBackward", "variance");
  NormGrads r;
  r.dx = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  r.dgamma = Tensor::Empty({c}, DType::kFloat32, x.device());
  r.dbeta = Tensor::Empty({c}, DType::kFloat32, x.device());
  if (rows == 0) {
    r.dgamma.Fill(0.f);
    r.dbeta.Fill(0.f);
    return r;
  }
  BackendFor(x.device())
      .LayerNormBackward(dy.Reshape({rows, c}), x.Reshape({rows, c}), g, mean, variance, epsilon,
                         r.dx, r.dgamma, r.dbeta);
  return r;
}

namespace {

Tensor SoftmaxImpl(const Tensor& x, int axis, bool log, const char* op) {
  CheckFloat(x, op, "x");
  int a = NormalizeAxis(axis, x.rank(), op);
  Tensor y = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  if (x.numel() == 0) return y;
  BackendFor(x.device()).Softmax(x, a, log, y);
  return y;
}

Tensor SoftmaxBackwardImpl(const Tensor& dy, const Tensor& y, int axis, bool log, const char* op) {
  CheckFloat(dy, op, "dy");
  CheckFloat(y, op, "y");
  CheckSameShape(dy, y, op);
  int a = NormalizeAxis(axis, y.rank(), op);
  Tensor dx = Tensor::Empty(y.shape(), DType::kFloat32, y.device());
  if (y.numel() == 0) return dx;
  BackendFor(y.device()).SoftmaxBackward(dy, y, a, log, dx);
  return dx;
}

}  // namespace

Tensor Softmax(const Tensor& x, int axis) { return SoftmaxImpl(x, axis, false, "Softmax"); }
Tensor SoftmaxBackward(const Tensor& dy, const Tensor& y, int axis) {
  return SoftmaxBackwardImpl(dy, y, axis, false, "SoftmaxBackward");
}
Tensor LogSoftmax(const Tensor& x, int axis) { return SoftmaxImpl(x, axis, true, "LogSoftmax"); }
Tensor LogSoftmaxBackward(const Tensor& dy, const Tensor& y, int axis) {
  return SoftmaxBackwardImpl(dy, y, axis, true, "LogSoftmaxBackward");
}

}  // namespace edl::tensor
