// Conv2DTranspose: the transposed 2-D convolution over NHWC inputs (Keras
// Conv2DTranspose, channels_last only), computed as the input gradient of
// the Conv2D that maps its output back to its input (the backends' own
// convolution kernels). Weights: kernel [kh, kw, filters, in_channels] (as
// Keras), bias [filters]. Output size per axis by Keras' rule
// (tensor::TransposedConvOutputSize): h * stride + max(dilated kernel -
// stride, 0) with "valid" padding, h * stride with "same"; with
// output_padding p (0 <= p < stride), (h - 1) * stride + dilated kernel -
// 2 * pad + p, pad = dilated kernel / 2 for "same" and 0 for "valid".
#pragma once

#include <array>

#include "nn/layers/activations.h"
#include "nn/layers/conv2d.h"
#include "nn/layers/kernel_bias_config.h"
#include "nn/layers/layer.h"
#include "tensor/ops.h"

namespace edl::nn::layers {

class Conv2DTranspose : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Conv2DTranspose"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  // The convolution from an output of spatial size [oh, ow] to the input.
  tensor::Conv2DParams ParamsFor(int64_t oh, int64_t ow) const;

  int64_t filters_ = 0;
  ConvWindow window_;                              // never causal
  std::array<int64_t, 2> output_padding_{-1, -1};  // -1: none (null)
  ActivationKind activation_ = ActivationKind::kLinear;
  bool use_bias_ = true;
  KernelBiasConfig kernel_bias_;
  int64_t in_channels_ = -1;
  Parameter* kernel_ = nullptr;
  Parameter* bias_ = nullptr;
};

}  // namespace edl::nn::layers
