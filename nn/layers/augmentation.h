// Keras' random image augmentation layers over [H, W, C] inputs
// (channels_last), active only in training: at inference (evaluation,
// prediction, the TF.js export) each is the identity, except RandomCrop,
// which then centre-crops to the target's aspect ratio and resizes
// (Keras' smart_resize), as Keras does.
//
// Randomness: each record draws from a generator seeded by its key
// (CallContext::record_keys: the job's seed, the epoch and the record's
// index, AugmentationKey), the layer's name and its "seed", so a record
// sees the same augmentation however often its task is retried, and a run
// is reproducible; a different epoch draws anew. Keras draws some values
// once per batch (RandomCrop's offset, Keras 2 RandomContrast's factor);
// edl draws every value per record, from the same distribution.
//
//   RandomFlip        mode horizontal | vertical | horizontal_and_vertical:
//                     each direction flipped with probability 1/2.
//   RandomContrast    factor f or [lo, hi] in [0, 1]: c ~ U(1 - lo, 1 + hi);
//                     (x - mean) * c + mean, the mean per channel over the
//                     image, clipped to value_range ([0, 255]).
//   RandomBrightness  factor f or [lo, hi] in [-1, 1]: x + d (r1 - r0),
//                     d ~ U(lo, hi), clipped to value_range [r0, r1].
//   RandomCrop        height, width: a window at a uniformly drawn offset;
//                     an input smaller than it is smart-resized instead.
//
// The layers pass no gradient to what comes before them: put them first,
// on the input, as Keras' examples do (a warning says so otherwise).
#pragma once

#include <cstdint>
#include <random>

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class ConfigReader;

// Reads a factor field: f means [-f, f]; [lo, hi] as is, or [-lo, hi] with
// `negate_lower` (RandomContrast: [lo, hi] means U(1 - lo, 1 + hi)). False
// (and nothing recorded) when the field is absent or null.
bool ReadAugmentFactor(ConfigReader& r, const char* field, bool negate_lower, double* lo,
                       double* hi);

// The key of record `record` in epoch `epoch` of a job seeded `seed`.
uint64_t AugmentationKey(uint64_t seed, int64_t epoch, int64_t record);

// A per-record generator (SplitMix64): identical on every platform.
class AugmentRng {
 public:
  explicit AugmentRng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi);

 private:
  uint64_t state_;
};

// The shared part: per-record draws in training, a host computation.
class RandomAugmentation : public Layer {
 public:
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  using Layer::Layer;
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  // One record: `in` [h, w, c] to `out` (of OutputShapes' size).
  virtual void Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
                       float* out) const = 0;
  // What inference returns (the identity here).
  virtual Var Infer(const Var& x) { return x; }
  // Extra config fields.
  virtual void AddConfig(nlohmann::json& c) const = 0;
  // Reads "seed" (an int or null).
  void ReadSeed(const nlohmann::json& config);

  int64_t seed_ = 0;
  bool seeded_ = false;
  bool warned_ = false;
};

class RandomFlip : public RandomAugmentation {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RandomFlip"; }

 protected:
  void Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
               float* out) const override;
  void AddConfig(nlohmann::json& c) const override;

 private:
  using RandomAugmentation::RandomAugmentation;
  bool horizontal_ = true, vertical_ = true;
};

class RandomContrast : public RandomAugmentation {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RandomContrast"; }

 protected:
  void Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
               float* out) const override;
  void AddConfig(nlohmann::json& c) const override;

 private:
  using RandomAugmentation::RandomAugmentation;
  double lower_ = 0, upper_ = 0;
  double range_lo_ = 0, range_hi_ = 255;
};

class RandomBrightness : public RandomAugmentation {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RandomBrightness"; }

 protected:
  void Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
               float* out) const override;
  void AddConfig(nlohmann::json& c) const override;

 private:
  using RandomAugmentation::RandomAugmentation;
  double lower_ = 0, upper_ = 0;
  double range_lo_ = 0, range_hi_ = 255;
};

class RandomCrop : public RandomAugmentation {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RandomCrop"; }

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  void Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
               float* out) const override;
  Var Infer(const Var& x) override;
  void AddConfig(nlohmann::json& c) const override;

 public:
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;

 private:
  using RandomAugmentation::RandomAugmentation;
  int64_t height_ = 0, width_ = 0;
  std::unique_ptr<Layer> resize_;  // smart_resize: Resizing with crop_to_aspect_ratio
};

}  // namespace edl::nn::layers
