#include "nn/optim/ftrl.h"

#include <algorithm>
#include <cmath>

namespace edl::nn::optim {

namespace {

struct FtrlCoefficients {
  float lr, inv_lr, l1, two_l2, two_shrinkage, power;  // power = -lr_power
};

// kSqrt: p = 0.5 (the default learning_rate_power of -0.5) uses sqrt.
template <bool kSqrt>
void FtrlKernel(float* __restrict w, const float* __restrict g,
                float* __restrict accum, float* __restrict linear, int64_t n,
                const FtrlCoefficients& c) {
  const float inv_lr = c.inv_lr, l1 = c.l1, two_l2 = c.two_l2;
  const float two_shrinkage = c.two_shrinkage, power = c.power;
  auto root = [power](float x) {
    if constexpr (kSqrt) {
      return std::sqrt(x);
    } else {
      return std::pow(x, power);
    }
  };
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float g_shrunk = g[i] + two_shrinkage * w[i];
    const float new_accum = accum[i] + g[i] * g[i];
    const float new_root = root(new_accum);
    linear[i] += g_shrunk - (new_root - root(accum[i])) * inv_lr * w[i];
    const float z = linear[i];
    const float x = std::min(std::max(z, -l1), l1) - z;
    w[i] = x / (new_root * inv_lr + two_l2);
    accum[i] = new_accum;
  }
}

}  // namespace

Ftrl::Ftrl(FtrlOptions options)
    : Optimizer("Ftrl", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Ftrl::SlotSpecs() const {
  return {
      {"accumulator", static_cast<float>(options_.initial_accumulator_value)},
      {"linear", 0.f}};
}

void Ftrl::Update(const Step& step, const UpdateTarget& t) {
  const double lr = step.learning_rate;
  const double l2 =
      options_.l2_regularization_strength + options_.beta / (2.0 * lr);
  const FtrlCoefficients c{
      static_cast<float>(lr),
      static_cast<float>(1.0 / lr),
      static_cast<float>(options_.l1_regularization_strength),
      static_cast<float>(2.0 * l2),
      static_cast<float>(2.0 * options_.l2_shrinkage_regularization_strength),
      static_cast<float>(-options_.learning_rate_power)};
  float* const accum = t.slots[0];
  float* const linear = t.slots[1];
  if (options_.learning_rate_power == -0.5) {
    ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
      FtrlKernel<true>(t.value + off, t.grad + goff, accum + off, linear + off,
                       n, c);
    });
  } else {
    ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
      FtrlKernel<false>(t.value + off, t.grad + goff, accum + off, linear + off,
                        n, c);
    });
  }
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Ftrl::Hyperparameters() const {
  return {{"learning_rate_power", options_.learning_rate_power},
          {"initial_accumulator_value", options_.initial_accumulator_value},
          {"l1_regularization_strength", options_.l1_regularization_strength},
          {"l2_regularization_strength", options_.l2_regularization_strength},
          {"l2_shrinkage_regularization_strength",
           options_.l2_shrinkage_regularization_strength},
          {"beta", options_.beta}};
}

}  // namespace edl::nn::optim
