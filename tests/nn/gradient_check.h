// A finite-difference gradient checker for tests: compares the gradients
// Backward() accumulates into Parameters with central differences of
// sum(seed * f(inputs)), accumulated in float64, for a random seed.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nn/autograd.h"
#include "tensor/backend.h"

namespace edl::nn::testing {

struct GradCheckOptions {
  double eps = 1e-3;
  double rtol = 1e-2;
  double atol = 2e-3;
  uint64_t seed = 7;
};

// Uniform values in [lo, hi] with |x| >= min_abs (keeps inputs off kinks).
inline Tensor RandomTensor(const Shape& shape, std::mt19937_64& rng,
                           float lo = -1.f, float hi = 1.f,
                           float min_abs = 0.f) {
  Tensor t = Tensor::Empty(shape);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v;
    do {
      v = u(rng);
    } while (std::abs(v) < min_abs);
    t.f32()[i] = v;
  }
  return t;
}

inline double WeightedSum(const Tensor& y, const Tensor& w) {
  double s = 0;
  for (int64_t i = 0; i < y.numel(); ++i) s += double(y.f32()[i]) * w.f32()[i];
  return s;
}

using TestFn = std::function<Var(const std::vector<Var>&)>;

// Checks d sum(seed * f(x)) / dx for every input against central
// differences on the backend ops.h currently uses.
inline void ExpectGradientsMatchOnCurrentBackend(
    const TestFn& f, const std::vector<Tensor>& inputs,
    const GradCheckOptions& o) {
  std::vector<Parameter> params(inputs.size());
  std::vector<Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    params[i].name = "input" + std::to_string(i);
    params[i].value = inputs[i].Clone();
  }
  for (auto& p : params) vars.push_back(Use(p));
  Var y = f(vars);
  ASSERT_TRUE(y.requires_grad()) << "output does not depend on the inputs";
  std::mt19937_64 rng(o.seed);
  Tensor seed = RandomTensor(y.shape(), rng, -1.f, 1.f);
  Backward(y, seed);

  for (size_t i = 0; i < params.size(); ++i) {
    Parameter& p = params[i];
    for (int64_t k = 0; k < p.value.numel(); ++k) {
      float* v = p.value.f32() + k;
      const float saved = *v;
      double plus, minus;
      {
        NoGradGuard guard;
        std::vector<Var> cs;
        for (auto& q : params) cs.push_back(Use(q));
        *v = static_cast<float>(saved + o.eps);
        plus = WeightedSum(f(cs).value(), seed);
        *v = static_cast<float>(saved - o.eps);
        minus = WeightedSum(f(cs).value(), seed);
        *v = saved;
      }
      const double numeric = (plus - minus) / (2 * o.eps);
      const double analytic = p.grad.defined() ? p.grad.f32()[k] : 0.0;
      const double tol =
          o.atol + o.rtol * std::max(std::abs(numeric), std::abs(analytic));
      ASSERT_NEAR(analytic, numeric, tol) << "input " << i << " element " << k;
    }
  }
}

// Runs the check on the reference loops and on the oneDNN backend.
inline void ExpectGradientsMatch(const TestFn& f,
                                 const std::vector<Tensor>& inputs,
                                 const GradCheckOptions& o = {}) {
  for (tensor::Backend* backend :
       {&tensor::ReferenceBackend(), &tensor::CpuBackend()}) {
    SCOPED_TRACE(std::string("backend ") + backend->name());
    tensor::ScopedBackend scoped(*backend);
    ExpectGradientsMatchOnCurrentBackend(f, inputs, o);
  }
}

}  // namespace edl::nn::testing
