// Layers that move values around without weights (channels_last only):
//   ZeroPadding2D (padding: n, [rows, cols] or [[top, bottom], [left, right]]),
//   Cropping2D (cropping: the same forms),
//   UpSampling2D (size: n or [rows, cols], default 2; interpolation "nearest"
//     only: each row and column repeated),
//   RepeatVector (n: [d] -> [n, d]),
//   Rescaling (scale, offset: x * scale + offset).
// All are composed from differentiable concatenation, slicing, reshaping
// and affine ops, so every backend runs them.
#pragma once

#include <array>

#include "nn/layers/layer.h"

namespace edl::nn::layers {

// ZeroPadding2D or Cropping2D: rows and columns added (zeros) or removed at
// each edge of [H, W, C].
class Edges2D : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(bool crop, const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return crop_ ? "Cropping2D" : "ZeroPadding2D"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  Edges2D(bool crop, std::string name) : Layer(std::move(name)), crop_(crop) {}
  bool crop_;
  std::array<int64_t, 4> edges_{};  // top, bottom, left, right
};

class UpSampling2D : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "UpSampling2D"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  std::array<int64_t, 2> size_{2, 2};
};

class RepeatVector : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RepeatVector"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  int64_t n_ = 1;
};

// Permute: reorders the axes after the batch; `dims` lists, for each output
// axis, the input axis it takes (1-based, as Keras: [2, 1] swaps the two).
class Permute : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Permute"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  std::vector<int64_t> dims_;
};

class Rescaling : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Rescaling"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  float scale_ = 1.f, offset_ = 0.f;
};

}  // namespace edl::nn::layers
