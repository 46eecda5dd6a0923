#include "nn/optim/adadelta.h"

#include <cmath>

namespace edl::nn::optim {

namespace {

void AdadeltaKernel(float* __restrict w, const float* __restrict g,
                    float* __restrict accum, float* __restrict accum_update,
                    int64_t n, float lr, float rho, float epsilon) {
  const float one_minus_rho = 1.f - rho;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    accum[i] = accum[i] * rho + g[i] * g[i] * one_minus_rho;
    const float u = std::sqrt(accum_update[i] + epsilon) /
                    std::sqrt(accum[i] + epsilon) * g[i];
    w[i] -= u * lr;
    accum_update[i] = accum_update[i] * rho + u * u * one_minus_rho;
  }
}

}  // namespace

Adadelta::Adadelta(AdadeltaOptions options)
    : Optimizer("Adadelta", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adadelta::SlotSpecs() const {
  return {{"accum_grad", 0.f}, {"accum_var", 0.f}};
}

void Adadelta::Update(const Step& step, const UpdateTarget& t) {
  const float lr = static_cast<float>(step.learning_rate);
  const float rho = static_cast<float>(options_.rho);
  const float epsilon = static_cast<float>(options_.epsilon);
  float* const accum = t.slots[0];
  float* const accum_update = t.slots[1];
  ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
    AdadeltaKernel(t.value + off, t.grad + goff, accum + off,
                   accum_update + off, n, lr, rho, epsilon);
  });
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Adadelta::Hyperparameters() const {
  return {{"rho", options_.rho}, {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
