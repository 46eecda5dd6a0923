// Keras weight initializers: options parsed from Keras JSON and a function
// that fills a new tensor. Fans follow Keras: a dense kernel [in, out] has
// fan_in = in, fan_out = out; a conv kernel HWIO [..., in, out] multiplies
// both by the receptive field (the product of the leading dimensions); a
// vector [n] has fan_in = fan_out = n.
//
// Thread-safety: pure functions; the rng is the caller's.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::nn {

struct InitializerOptions {
  // Canonical snake_case: glorot_uniform, glorot_normal, he_normal,
  // he_uniform, lecun_normal, lecun_uniform, variance_scaling, zeros, ones,
  // constant, random_normal, random_uniform, truncated_normal, orthogonal,
  // identity.
  std::string name = "glorot_uniform";
  double scale = 1;                               // variance_scaling
  double mean = 0;                                // random_normal, truncated_normal
  double stddev = 0.05;                           // random_normal, truncated_normal
  double minval = -0.05;                          // random_uniform
  double maxval = 0.05;                           // random_uniform
  double value = 0;                               // constant
  double gain = 1;                                // orthogonal, identity
  std::string mode = "fan_in";                    // fan_in, fan_out, fan_avg
  std::string distribution = "truncated_normal";  // truncated_normal,
                                                  // untruncated_normal, uniform
  // The Keras config's seed, if any; Initialize() draws from the rng it is
  // given, so a caller wanting Keras-style seeding seeds that rng with it.
  std::optional<int64_t> seed;
};

// Parses "glorot_uniform" / "GlorotUniform" or
// {"class_name": "VarianceScaling", "config": {"scale": 2.0, ...}}
// (CamelCase and snake_case class names alike). Errors name `where` and the
// field.
Result<InitializerOptions> InitializerFromJson(const std::string& json_text,
                                               const std::string& where);

// Keras' fans for a weight shape.
struct Fans {
  double fan_in, fan_out;
};
Fans ComputeFans(const tensor::Shape& shape);

// A float32 tensor of `shape` drawn as `options` says.
// REQUIRES: options came from InitializerFromJson or names a known
// initializer with valid fields.
tensor::Tensor Initialize(const InitializerOptions& options, const tensor::Shape& shape,
                          std::mt19937_64& rng);

// A random bit generator (SplitMix64, a UniformRandomBitGenerator) for many
// short independent streams, such as one per embedding row: seeding sets
// one word, where std::mt19937_64 fills and then twists 312.
class SplitMix64Rng {
 public:
  using result_type = uint64_t;
  explicit SplitMix64Rng(uint64_t seed) : state_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// Initialize's values for `shape`, drawn with `rng`, written to
// out[0..numel) (no tensor allocated). REQUIRES: as Initialize.
void InitializeInto(const InitializerOptions& options, const tensor::Shape& shape,
                    SplitMix64Rng& rng, float* out);

}  // namespace edl::nn
