// Regularization layers that add noise while training and pass their input
// through unchanged otherwise (their noise is drawn on the host from the
// call's rng and multiplied or added in, so the gradient is the noise's):
//   SpatialDropout1D / SpatialDropout2D (rate): whole channels dropped per
//     sample (input [steps, C] / [H, W, C]), the rest scaled by 1/(1-rate);
//   GaussianNoise (stddev): x + N(0, stddev);
//   GaussianDropout (rate): x * N(1, sqrt(rate / (1 - rate)));
//   AlphaDropout (rate): dropped values set to SELU's negative saturation,
//     then an affine map that keeps SELU's mean and variance (as Keras).
#pragma once

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class NoiseLayer : public Layer {
 public:
  enum class Kind {
    kSpatialDropout1D,
    kSpatialDropout2D,
    kGaussianNoise,
    kGaussianDropout,
    kAlphaDropout
  };
  static Result<std::unique_ptr<Layer>> FromConfig(Kind kind, const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override;
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  NoiseLayer(Kind kind, std::string name) : Layer(std::move(name)), kind_(kind) {}
  Kind kind_;
  float amount_ = 0.f;  // rate, or stddev for GaussianNoise
};

}  // namespace edl::nn::layers
