// Rng: a small deterministic random generator (SplitMix64) for shuffling and
// synthetic data. Unlike std::shuffle and std::normal_distribution, its
// sequences are identical on every standard library and platform, so a seed
// names the same permutation everywhere (workers on different machines must
// agree on it). Not thread-safe; not for cryptography.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

namespace edl::data {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t NextU64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return (NextU64() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n). REQUIRES: n > 0. Rejection sampling, no modulo bias.
  uint64_t UniformInt(uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
      x = NextU64();
    } while (x >= limit);
    return x % n;
  }
  // Standard normal (Box-Muller, one value per call).
  double Normal() {
    double u1 = Uniform();
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  // Fisher-Yates shuffle of v.
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      size_t j = static_cast<size_t>(UniformInt(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  uint64_t state_;
};

// Mixes two values into one seed (e.g. a job seed and an epoch number).
inline uint64_t MixSeed(uint64_t a, uint64_t b) {
  Rng rng(a ^ (b * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
  return rng.NextU64();
}

}  // namespace edl::data
