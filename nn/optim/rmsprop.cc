#include "nn/optim/rmsprop.h"

#include <cmath>

namespace edl::nn::optim {

namespace {

struct RmspropCoefficients {
  float lr, rho, one_minus_rho, momentum, epsilon;
};

void PlainKernel(float* __restrict w, const float* __restrict g,
                 float* __restrict rms, int64_t n,
                 const RmspropCoefficients& c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    rms[i] = c.rho * rms[i] + c.one_minus_rho * g[i] * g[i];
    w[i] -= c.lr * g[i] / (std::sqrt(rms[i]) + c.epsilon);
  }
}

void PlainCenteredKernel(float* __restrict w, const float* __restrict g,
                         float* __restrict rms, float* __restrict mg, int64_t n,
                         const RmspropCoefficients& c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    rms[i] = c.rho * rms[i] + c.one_minus_rho * g[i] * g[i];
    mg[i] = c.rho * mg[i] + c.one_minus_rho * g[i];
    w[i] -= c.lr * g[i] / (std::sqrt(rms[i] - mg[i] * mg[i]) + c.epsilon);
  }
}

void MomentumKernel(float* __restrict w, const float* __restrict g,
                    float* __restrict rms, float* __restrict mom, int64_t n,
                    const RmspropCoefficients& c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    rms[i] += (g[i] * g[i] - rms[i]) * c.one_minus_rho;
    mom[i] = c.momentum * mom[i] + c.lr * g[i] / std::sqrt(rms[i] + c.epsilon);
    w[i] -= mom[i];
  }
}

void MomentumCenteredKernel(float* __restrict w, const float* __restrict g,
                            float* __restrict rms, float* __restrict mom,
                            float* __restrict mg, int64_t n,
                            const RmspropCoefficients& c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    rms[i] += (g[i] * g[i] - rms[i]) * c.one_minus_rho;
    mg[i] += (g[i] - mg[i]) * c.one_minus_rho;
    mom[i] = c.momentum * mom[i] +
             c.lr * g[i] / std::sqrt(rms[i] - mg[i] * mg[i] + c.epsilon);
    w[i] -= mom[i];
  }
}

}  // namespace

Rmsprop::Rmsprop(RmspropOptions options)
    : Optimizer("RMSprop", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Rmsprop::SlotSpecs() const {
  std::vector<SlotSpec> specs = {{"rms", 0.f}};
  if (options_.momentum > 0) specs.push_back({"momentum", 0.f});
  if (options_.centered) specs.push_back({"mg", 0.f});
  return specs;
}

void Rmsprop::Update(const Step& step, const UpdateTarget& t) {
  const RmspropCoefficients c{static_cast<float>(step.learning_rate),
                              static_cast<float>(options_.rho),
                              static_cast<float>(1.0 - options_.rho),
                              static_cast<float>(options_.momentum),
                              static_cast<float>(options_.epsilon)};
  float* const rms = t.slots[0];
  if (options_.momentum > 0) {
    float* const mom = t.slots[1];
    if (options_.centered) {
      float* const mg = t.slots[2];
      ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
        MomentumCenteredKernel(t.value + off, t.grad + goff, rms + off,
                               mom + off, mg + off, n, c);
      });
    } else {
      ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
        MomentumKernel(t.value + off, t.grad + goff, rms + off, mom + off, n,
                       c);
      });
    }
  } else if (options_.centered) {
    float* const mg = t.slots[1];
    ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
      PlainCenteredKernel(t.value + off, t.grad + goff, rms + off, mg + off, n,
                          c);
    });
  } else {
    ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
      PlainKernel(t.value + off, t.grad + goff, rms + off, n, c);
    });
  }
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Rmsprop::Hyperparameters() const {
  return {{"rho", options_.rho},
          {"momentum", options_.momentum},
          {"epsilon", options_.epsilon},
          {"centered", options_.centered}};
}

}  // namespace edl::nn::optim
