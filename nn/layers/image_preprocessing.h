// Keras' deterministic image preprocessing layers over [H, W, C] inputs
// (channels_last), with Keras' (tf.image) semantics:
//
// Resizing: height, width, interpolation bilinear (default) or nearest,
// both with half-pixel centers and no antialiasing, as tf.image.resize;
// crop_to_aspect_ratio first crops the largest centred window of the target
// aspect ratio. Computed as one interpolation matrix per axis (matrix
// products, so gradients flow and every backend runs it).
//
// CenterCrop: the centred height x width window (offsets (H - height) / 2
// rounded down). An input smaller than the window is refused (Keras would
// resize it up).
//
// TF.js computes both differently: its Resizing passes !crop_to_aspect_ratio
// as align_corners, and its CenterCrop samples the window with
// cropAndResize, shifting it by a column when the widths differ by one.
// edl follows Keras, so a model trained in Keras predicts the same.
#pragma once

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class Resizing : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Resizing"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  int64_t height_ = 0, width_ = 0;
  bool bilinear_ = true;
  bool crop_to_aspect_ratio_ = false;
};

class CenterCrop : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "CenterCrop"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  int64_t height_ = 0, width_ = 0;
};

}  // namespace edl::nn::layers
