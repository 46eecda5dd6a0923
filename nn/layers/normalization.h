// Normalization over the last (channel) axis:
//   BatchNormalization (axis -1 only; momentum 0.99, epsilon 0.001, center,
//   scale). Weights in Keras order: gamma, beta (trainable), moving_mean,
//   moving_variance (not trainable). A layer with trainable=false runs in
//   inference mode even in training, as Keras 2.
//   LayerNormalization (axis -1 only; epsilon 0.001, center, scale).
//   Weights: gamma, beta.
#pragma once

#include "nn/layers/layer.h"
#include "nn/layers/weight_config.h"

namespace edl::nn::layers {

class BatchNormalization : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "BatchNormalization"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  int64_t axis_ = -1;
  float momentum_ = 0.99f, epsilon_ = 0.001f;
  bool center_ = true, scale_ = true;
  WeightInit beta_init_, gamma_init_, mean_init_, variance_init_;
  WeightPenalty beta_reg_, gamma_reg_;
  int64_t channels_ = -1;
  Parameter* gamma_ = nullptr;
  Parameter* beta_ = nullptr;
  Parameter* moving_mean_ = nullptr;
  Parameter* moving_variance_ = nullptr;
};

class LayerNormalization : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "LayerNormalization"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  int64_t axis_ = -1;
  float epsilon_ = 0.001f;
  bool center_ = true, scale_ = true;
  WeightInit beta_init_, gamma_init_;
  WeightPenalty beta_reg_, gamma_reg_;
  int64_t channels_ = -1;
  Parameter* gamma_ = nullptr;
  Parameter* beta_ = nullptr;
};

}  // namespace edl::nn::layers
