// DepthwiseConv2D and SeparableConv2D (Keras, channels_last), on grouped
// convolutions (tensor/ops.h Conv2DParams::groups, oneDNN on the CPU).
//
// DepthwiseConv2D: each input channel c convolved with its own
// depth_multiplier (M) filters; output channel c * M + m. Weights:
// depthwise_kernel [kh, kw, C, M], bias [C * M].
// SeparableConv2D: that depthwise step (no bias), then a 1x1 convolution to
// `filters` channels. Weights: depthwise_kernel [kh, kw, C, M],
// pointwise_kernel [1, 1, C * M, filters], bias [filters].
#pragma once

#include "nn/layers/conv2d.h"

namespace edl::nn::layers {

class DepthwiseConv2D : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  static Result<std::unique_ptr<Layer>> FromConfigSeparable(const std::string& name,
                                                            const nlohmann::json& config);
  const char* class_name() const override {
    return separable_ ? "SeparableConv2D" : "DepthwiseConv2D";
  }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  static Result<std::unique_ptr<Layer>> Read(bool separable, const std::string& name,
                                             const nlohmann::json& config);

  bool separable_ = false;
  int64_t filters_ = 0;  // SeparableConv2D
  int64_t multiplier_ = 1;
  ConvWindow window_;
  ActivationKind activation_ = ActivationKind::kLinear;
  bool use_bias_ = true;
  WeightInit depthwise_init_, pointwise_init_, bias_init_;
  WeightPenalty depthwise_reg_, pointwise_reg_, bias_reg_;
  int64_t in_channels_ = -1;
  Parameter* depthwise_ = nullptr;
  Parameter* pointwise_ = nullptr;
  Parameter* bias_ = nullptr;
};

}  // namespace edl::nn::layers
