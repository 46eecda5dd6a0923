// Dense: y = activation(x kernel + bias) over the last axis (Keras Dense;
// inputs of rank > 2 are treated as a batch of rows). Weights: kernel
// [in, units], bias [units].
#pragma once

#include "nn/layers/activations.h"
#include "nn/layers/kernel_bias_config.h"
#include "nn/layers/layer.h"

namespace edl::nn::layers {

class Dense : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Dense"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  int64_t units_ = 0;
  int64_t in_dim_ = -1;
  ActivationKind activation_ = ActivationKind::kLinear;
  bool use_bias_ = true;
  KernelBiasConfig kernel_bias_;
  Parameter* kernel_ = nullptr;
  Parameter* bias_ = nullptr;
};

}  // namespace edl::nn::layers
