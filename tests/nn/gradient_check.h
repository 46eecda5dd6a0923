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
#include "nn/functional.h"
#include "tensor/backend.h"

namespace edl::nn::testing {

struct GradCheckOptions {
  double eps = 1e-3;
  double rtol = 1e-2;
  double atol = 2e-3;
  uint64_t seed = 7;
};

// Uniform values in [lo, hi] with |x| >= min_abs (keeps inputs off kinks).
inline Tensor RandomTensor(const Shape& shape, std::mt19937_64& rng, float lo = -1.f,
                           float hi = 1.f, float min_abs = 0.f) {
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
using MultiFn = std::function<std::vector<Var>(const std::vector<Var>&)>;

// Checks the gradients of sum_i(seed_i * f(x)_i) with respect to every
// input and to `weights`, Parameters f reads itself (a layer's), against
// central differences on the backend ops.h currently uses.
inline void ExpectWeightGradientsMatchOnCurrentBackend(const MultiFn& f,
                                                       const std::vector<Tensor>& inputs,
                                                       const std::vector<Parameter*>& weights,
                                                       const GradCheckOptions& o) {
  std::vector<Parameter> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in[i].name = "input" + std::to_string(i);
    in[i].value = inputs[i].Clone();
  }
  std::vector<Parameter*> all;
  for (auto& p : in) all.push_back(&p);
  for (Parameter* p : weights) all.push_back(p);
  std::vector<Tensor> seeds;
  bool depends = false;
  auto loss = [&](bool record) {
    std::vector<Var> vars;
    for (auto& p : in) vars.push_back(Use(p));
    std::vector<Var> out = f(vars);
    std::mt19937_64 rng(o.seed);
    if (seeds.empty()) {
      for (const Var& y : out) seeds.push_back(RandomTensor(y.shape(), rng, -1.f, 1.f));
    }
    double value = 0;
    Var total;
    for (size_t k = 0; k < out.size(); ++k) {
      value += WeightedSum(out[k].value(), seeds[k]);
      depends = depends || out[k].requires_grad();
      Var term = fn::Sum(fn::Mul(out[k], Var(seeds[k])));
      total = total.defined() ? fn::Add(total, term) : term;
    }
    if (record && total.requires_grad()) Backward(total);
    return value;
  };
  for (Parameter* p : all) p->ZeroGrad();
  loss(true);
  ASSERT_TRUE(depends) << "output does not depend on the inputs";
  for (Parameter* pp : all) {
    Parameter& p = *pp;
    const Tensor analytic = p.grad.defined() ? p.grad.Clone() : Tensor();
    for (int64_t k = 0; k < p.value.numel(); ++k) {
      float* v = p.value.f32() + k;
      const float saved = *v;
      double plus, minus;
      {
        NoGradGuard guard;
        *v = static_cast<float>(saved + o.eps);
        plus = loss(false);
        *v = static_cast<float>(saved - o.eps);
        minus = loss(false);
        *v = saved;
      }
      const double numeric = (plus - minus) / (2 * o.eps);
      const double a = analytic.defined() ? analytic.f32()[k] : 0.0;
      const double tol = o.atol + o.rtol * std::max(std::abs(numeric), std::abs(a));
      ASSERT_NEAR(a, numeric, tol) << p.name << " element " << k;
    }
  }
  for (Parameter* p : weights) p->ZeroGrad();
}

// Checks d sum(seed * f(x)) / dx for every input against central
// differences on the backend ops.h currently uses.
inline void ExpectGradientsMatchOnCurrentBackend(const TestFn& f, const std::vector<Tensor>& inputs,
                                                 const GradCheckOptions& o) {
  ExpectWeightGradientsMatchOnCurrentBackend(
      [&](const std::vector<Var>& v) { return std::vector<Var>{f(v)}; }, inputs, {}, o);
}

// The checks above on the reference loops and on the oneDNN backend.
inline void ExpectWeightGradientsMatch(const MultiFn& f, const std::vector<Tensor>& inputs,
                                       const std::vector<Parameter*>& weights,
                                       const GradCheckOptions& o = {}) {
  for (tensor::Backend* backend : {&tensor::ReferenceBackend(), &tensor::CpuBackend()}) {
    SCOPED_TRACE(std::string("backend ") + backend->name());
    tensor::ScopedBackend scoped(*backend);
    ExpectWeightGradientsMatchOnCurrentBackend(f, inputs, weights, o);
  }
}

inline void ExpectGradientsMatch(const TestFn& f, const std::vector<Tensor>& inputs,
                                 const GradCheckOptions& o = {}) {
  ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return std::vector<Var>{f(v)}; },
                             inputs, {}, o);
}

}  // namespace edl::nn::testing
