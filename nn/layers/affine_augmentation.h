// Keras' random geometric augmentation layers over [H, W, C] inputs,
// active only in training (the identity at inference), drawing per record
// as nn/layers/augmentation.h says. Each maps output pixel (x, y) to the
// input point of a projective transform and samples it as TensorFlow's
// ImageProjectiveTransformV3 does (Keras 2 and 3 alike): interpolation
// bilinear or nearest (rounded), points outside the image filled by
// fill_mode reflect (dcba|abcd|dcba, the default), wrap (abcd|abcd), nearest
// (aaaa|abcd|dddd) or constant (fill_value).
//
//   RandomRotation     factor f or [lo, hi] (fractions of 2 pi; f means
//                      [-f, f]): angle ~ U(2 pi lo, 2 pi hi),
//                      counter-clockwise about the centre.
//   RandomZoom         height_factor, width_factor (f means [-f, f]):
//                      zoom ~ U(1 + lo, 1 + hi) per axis (width drawn
//                      separately only when width_factor is set);
//                      positive values zoom out.
//   RandomTranslation  height_factor, width_factor (f means [-f, f]):
//                      shifts ~ U(lo, hi) * height (and width) pixels.
#pragma once

#include <array>

#include "nn/layers/augmentation.h"

namespace edl::nn::layers {

enum class FillMode { kReflect, kWrap, kNearest, kConstant };

// One [h, w, c] image through the transform [a0, a1, a2, b0, b1, b2, c0,
// c1]: output (x, y) samples the input at ((a0 x + a1 y + a2) / k,
// (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
void ProjectiveTransform(const float* in, int64_t h, int64_t w, int64_t c,
                         const std::array<float, 8>& t, FillMode fill, bool bilinear,
                         float fill_value, float* out);

// The parts every geometric layer shares: fill and interpolation.
class AffineAugmentation : public RandomAugmentation {
 protected:
  using RandomAugmentation::RandomAugmentation;
  Status ReadSampling(const nlohmann::json& config);
  void AddSampling(nlohmann::json& c) const;
  // The transform of one record (drawn from rng).
  virtual std::array<float, 8> Draw(AugmentRng& rng, int64_t h, int64_t w) const = 0;
  void Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
               float* out) const override;

  FillMode fill_ = FillMode::kReflect;
  bool bilinear_ = true;
  float fill_value_ = 0.f;
};

class RandomRotation : public AffineAugmentation {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RandomRotation"; }

 protected:
  std::array<float, 8> Draw(AugmentRng& rng, int64_t h, int64_t w) const override;
  void AddConfig(nlohmann::json& c) const override;

 private:
  using AffineAugmentation::AffineAugmentation;
  double lower_ = 0, upper_ = 0;
};

class RandomZoom : public AffineAugmentation {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RandomZoom"; }

 protected:
  std::array<float, 8> Draw(AugmentRng& rng, int64_t h, int64_t w) const override;
  void AddConfig(nlohmann::json& c) const override;

 private:
  using AffineAugmentation::AffineAugmentation;
  double h_lower_ = 0, h_upper_ = 0, w_lower_ = 0, w_upper_ = 0;
  bool has_width_ = false;
};

class RandomTranslation : public AffineAugmentation {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RandomTranslation"; }

 protected:
  std::array<float, 8> Draw(AugmentRng& rng, int64_t h, int64_t w) const override;
  void AddConfig(nlohmann::json& c) const override;

 private:
  using AffineAugmentation::AffineAugmentation;
  double h_lower_ = 0, h_upper_ = 0, w_lower_ = 0, w_upper_ = 0;
};

}  // namespace edl::nn::layers
