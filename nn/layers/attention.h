// MultiHeadAttention (Keras): num_heads heads of scaled dot-product
// attention from query [Tq, Dq] to value [Tv, Dv] (keys from `key`
// [Tv, Dk], default value), projected back to Dq (or output_shape).
// Inputs in order: query, value, key (optional), attention_mask (optional,
// [Tq, Tv], 1 = may attend; Keras passes value, key and attention_mask by
// keyword and the model loader puts them in this order). Masked scores get
// -1e9 before the softmax, as Keras. dropout applies to the attention
// probabilities while training.
// Weights (as Keras): query/kernel [Dq, H, key_dim], query/bias [H, key_dim],
// key/kernel [Dk, H, key_dim], key/bias, value/kernel [Dv, H, value_dim],
// value/bias [H, value_dim], attention_output/kernel [H, value_dim, out],
// attention_output/bias [out].
#pragma once

#include "nn/layers/kernel_bias_config.h"
#include "nn/layers/layer.h"

namespace edl::nn::layers {

class MultiHeadAttention : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "MultiHeadAttention"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  // x [N, T, D] through kernel [D, H, dim] (+ bias [H, dim]) -> [N, H, T, dim].
  Var Project(const Var& x, Parameter* kernel, Parameter* bias, int64_t dim) const;

  int64_t heads_ = 1, key_dim_ = 0, value_dim_ = 0, output_dim_ = -1;
  float dropout_ = 0.f;
  bool use_bias_ = true;
  KernelBiasConfig kernel_bias_;
  Shape built_for_;  // query, value, key feature sizes
  Parameter* query_kernel_ = nullptr;
  Parameter* query_bias_ = nullptr;
  Parameter* key_kernel_ = nullptr;
  Parameter* key_bias_ = nullptr;
  Parameter* value_kernel_ = nullptr;
  Parameter* value_bias_ = nullptr;
  Parameter* output_kernel_ = nullptr;
  Parameter* output_bias_ = nullptr;
};

}  // namespace edl::nn::layers
