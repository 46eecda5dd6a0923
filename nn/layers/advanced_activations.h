// Keras' advanced activation layers:
//   LeakyReLU (alpha, or Keras 3's negative_slope; default 0.3): x for
//     x >= 0, alpha * x below;
//   ELU (alpha, default 1): x for x > 0, alpha * (exp(x) - 1) below;
//   PReLU: LeakyReLU with a learned slope per element (weight "alpha", of
//     the input's shape without the batch axis, 1 along `shared_axes`:
//     axes counted with the batch axis, as Keras), alpha_initializer
//     (default zeros) and alpha_regularizer; alpha_constraint must be null;
//   ThresholdedReLU (theta >= 0, default 1): x for x > theta, 0 otherwise
//     (its mask is made on the host: a rare layer, not worth a device op).
#pragma once

#include <vector>

#include "nn/layers/layer.h"
#include "nn/layers/weight_config.h"

namespace edl::nn::layers {

class LeakyReLU : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "LeakyReLU"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  float alpha_ = 0.3f;
};

class Elu : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "ELU"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  float alpha_ = 1.f;
};

class ThresholdedReLU : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "ThresholdedReLU"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  float theta_ = 1.f;
};

class PReLU : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "PReLU"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  WeightInit alpha_init_;
  WeightPenalty alpha_reg_;
  std::vector<int64_t> shared_axes_;  // counted with the batch axis, >= 1
  Shape alpha_shape_;                 // set when built
  Parameter* alpha_ = nullptr;
};

}  // namespace edl::nn::layers
