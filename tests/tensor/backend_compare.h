// Test helpers: random tensors, closeness checks, and running the same ops.h
// calls on the reference loops and on the CPU backend.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tensor/backend.h"
#include "tensor/ops.h"

namespace edl::tensor::testing {

inline Tensor Random(const Shape& shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(NumElements(shape));
  for (float& x : v) x = dist(rng);
  return Tensor::FromVector(shape, v);
}

// |a - b| <= atol + rtol * |b| elementwise, same shapes.
inline ::testing::AssertionResult Close(const Tensor& a, const Tensor& b, float rtol = 1e-4f,
                                        float atol = 1e-5f) {
  if (a.shape() != b.shape()) {
    return ::testing::AssertionFailure()
           << "shapes " << ShapeString(a.shape()) << " vs " << ShapeString(b.shape());
  }
  if (a.dtype() != b.dtype()) {
    return ::testing::AssertionFailure() << "dtypes differ";
  }
  std::vector<float> va = a.ToVector(), vb = b.ToVector();
  for (size_t i = 0; i < va.size(); ++i) {
    bool both_nan = std::isnan(va[i]) && std::isnan(vb[i]);
    if (both_nan || va[i] == vb[i]) continue;
    if (!(std::abs(va[i] - vb[i]) <= atol + rtol * std::abs(vb[i]))) {
      return ::testing::AssertionFailure() << "element " << i << " of " << ShapeString(a.shape())
                                           << ": " << va[i] << " vs " << vb[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs f() on the CPU backend and on the reference and expects every
// returned tensor to agree.
template <typename F>
void ExpectBackendsAgree(F f, float rtol = 1e-4f, float atol = 1e-5f) {
  std::vector<Tensor> cpu, ref;
  {
    ScopedBackend scope(CpuBackend());
    cpu = f();
  }
  {
    ScopedBackend scope(ReferenceBackend());
    ref = f();
  }
  ASSERT_EQ(cpu.size(), ref.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_TRUE(Close(cpu[i], ref[i], rtol, atol)) << "output " << i;
  }
}

}  // namespace edl::tensor::testing
