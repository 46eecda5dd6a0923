// Dropout masks from a counter-based generator: element i of the mask drawn
// with `seed` depends on (seed, i) alone, so the host loops and the CUDA
// kernel (tensor/backend.h DropoutMask) produce the same mask bit for bit,
// each element independently, without a generator state to carry between
// threads. The bits are SplitMix64's (Steele, Lea & Flood 2014): output i of
// the stream that starts at `seed`.
//
// Plain C++17 with no edl dependency, compiled by g++ and nvcc.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define EDL_DROPOUT_HD __host__ __device__
#else
#define EDL_DROPOUT_HD
#endif

namespace edl::tensor {

// An element is dropped when its 53 uniform bits, as an integer, are below
// this: u < rate with u = bits * 2^-53, compared exactly in integers.
inline uint64_t DropoutDropBelow(double rate) {
  return static_cast<uint64_t>(std::ceil(rate * 0x1.0p53));
}

EDL_DROPOUT_HD inline uint64_t SplitMix64At(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// 0 for a dropped element, keep_scale (1 / (1 - rate)) for a kept one.
EDL_DROPOUT_HD inline float DropoutMaskAt(uint64_t seed, uint64_t i, uint64_t drop_below,
                                          float keep_scale) {
  return (SplitMix64At(seed, i) >> 11) < drop_below ? 0.f : keep_scale;
}

}  // namespace edl::tensor
