#include "nn/optim/adamax.h"

#include <algorithm>
#include <cmath>

namespace edl::nn::optim {

namespace {

void AdamaxKernel(float* __restrict w, const float* __restrict g,
                  float* __restrict m, float* __restrict v, int64_t n,
                  float lr_t, float beta_1, float beta_2, float epsilon) {
  const float one_minus_beta_1 = 1.f - beta_1;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * one_minus_beta_1;
    v[i] = std::max(beta_2 * v[i], std::fabs(g[i]));
    w[i] -= lr_t * (m[i] / (v[i] + epsilon));
  }
}

}  // namespace

Adamax::Adamax(AdamaxOptions options)
    : Optimizer("Adamax", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adamax::SlotSpecs() const {
  return {{"m", 0.f}, {"v", 0.f}};
}

void Adamax::Update(const Step& step, const UpdateTarget& t) {
  const float lr_t = static_cast<float>(
      step.learning_rate /
      (1.0 - std::pow(options_.beta_1, static_cast<double>(step.t))));
  const float beta_1 = static_cast<float>(options_.beta_1);
  const float beta_2 = static_cast<float>(options_.beta_2);
  const float epsilon = static_cast<float>(options_.epsilon);
  float* const m = t.slots[0];
  float* const v = t.slots[1];
  ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
    AdamaxKernel(t.value + off, t.grad + goff, m + off, v + off, n, lr_t,
                 beta_1, beta_2, epsilon);
  });
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Adamax::Hyperparameters() const {
  return {{"beta_1", options_.beta_1},
          {"beta_2", options_.beta_2},
          {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
