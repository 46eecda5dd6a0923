#include "nn/optim/adam.h"

#include <algorithm>
#include <cmath>

namespace edl::nn::optim {

namespace {

struct AdamCoefficients {
  float lr_t, one_minus_beta_1, one_minus_beta_2, epsilon;
};

void AdamKernel(float* __restrict w, const float* __restrict g,
                float* __restrict m, float* __restrict v, int64_t n,
                const AdamCoefficients& c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * c.one_minus_beta_1;
    v[i] += (g[i] * g[i] - v[i]) * c.one_minus_beta_2;
    w[i] -= c.lr_t * m[i] / (std::sqrt(v[i]) + c.epsilon);
  }
}

void AmsgradKernel(float* __restrict w, const float* __restrict g,
                   float* __restrict m, float* __restrict v,
                   float* __restrict vhat, int64_t n,
                   const AdamCoefficients& c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * c.one_minus_beta_1;
    v[i] += (g[i] * g[i] - v[i]) * c.one_minus_beta_2;
    vhat[i] = std::max(vhat[i], v[i]);
    w[i] -= c.lr_t * m[i] / (std::sqrt(vhat[i]) + c.epsilon);
  }
}

}  // namespace

Adam::Adam(AdamOptions options)
    : Optimizer("Adam", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adam::SlotSpecs() const {
  if (options_.amsgrad) return {{"m", 0.f}, {"v", 0.f}, {"vhat", 0.f}};
  return {{"m", 0.f}, {"v", 0.f}};
}

void Adam::Update(const Step& step, const UpdateTarget& t) {
  const double tt = static_cast<double>(step.t);
  const double lr_t = step.learning_rate *
                      std::sqrt(1.0 - std::pow(options_.beta_2, tt)) /
                      (1.0 - std::pow(options_.beta_1, tt));
  const AdamCoefficients c{static_cast<float>(lr_t),
                           static_cast<float>(1.0 - options_.beta_1),
                           static_cast<float>(1.0 - options_.beta_2),
                           static_cast<float>(options_.epsilon)};
  float* const m = t.slots[0];
  float* const v = t.slots[1];
  if (options_.amsgrad) {
    float* const vhat = t.slots[2];
    ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
      AmsgradKernel(t.value + off, t.grad + goff, m + off, v + off, vhat + off,
                    n, c);
    });
  } else {
    ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
      AdamKernel(t.value + off, t.grad + goff, m + off, v + off, n, c);
    });
  }
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Adam::Hyperparameters() const {
  return {{"beta_1", options_.beta_1},
          {"beta_2", options_.beta_2},
          {"epsilon", options_.epsilon},
          {"amsgrad", options_.amsgrad}};
}

}  // namespace edl::nn::optim
