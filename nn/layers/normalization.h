// Normalization over the last (channel) axis:
//   BatchNormalization (axis -1 only; momentum 0.99, epsilon 0.001, center,
//   scale). Weights in Keras order: gamma, beta (trainable), moving_mean,
//   moving_variance (not trainable). A layer with trainable=false runs in
//   inference mode even in training, as Keras 2.
//   LayerNormalization (axis -1 only; epsilon 0.001, center, scale).
//   Weights: gamma, beta.
#pragma once

#include <utility>

#include "nn/layers/layer.h"
#include "nn/layers/weight_config.h"

namespace edl::nn::layers {

// What the two normalizations share: the axis (the last one only), epsilon,
// and the learned per-feature scale gamma (with `scale`) and offset beta
// (with `center`), both of shape [features].
class LastAxisNormalization : public Layer {
 public:
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }

 protected:
  using Layer::Layer;
  // Reads axis, epsilon, center, scale and gamma's and beta's initializers
  // and regularizers; their constraints must be null.
  void ReadCommon(ConfigReader& r);
  // Fails unless `in` is one input whose last axis is `axis_` (once built,
  // with the size the weights were built for; `unit` names what it counts).
  Status CheckInput(const std::vector<Shape>& in, const char* unit) const;
  // Sets the feature count from `in` and adds gamma and beta as configured.
  void AddScaleAndOffset(const std::vector<Shape>& in, std::mt19937_64& rng);
  // gamma and beta, or ones and zeros on `device` where the layer has none.
  std::pair<Var, Var> ScaleAndOffset(tensor::Device device);
  // The shared fields into a Keras config.
  void WriteCommon(nlohmann::json& c) const;

  int64_t axis_ = -1;
  float epsilon_ = 0.001f;
  bool center_ = true, scale_ = true;
  WeightInit beta_init_, gamma_init_;
  WeightPenalty beta_reg_, gamma_reg_;
  int64_t channels_ = -1;
  Parameter* gamma_ = nullptr;
  Parameter* beta_ = nullptr;
};

class BatchNormalization : public LastAxisNormalization {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "BatchNormalization"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using LastAxisNormalization::LastAxisNormalization;
  float momentum_ = 0.99f;
  WeightInit mean_init_, variance_init_;
  Parameter* moving_mean_ = nullptr;
  Parameter* moving_variance_ = nullptr;
};

class LayerNormalization : public LastAxisNormalization {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "LayerNormalization"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using LastAxisNormalization::LastAxisNormalization;
};

}  // namespace edl::nn::layers
