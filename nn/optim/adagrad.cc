#include "nn/optim/adagrad.h"

#include <cmath>

namespace edl::nn::optim {

namespace {

void AdagradKernel(float* __restrict w, const float* __restrict g,
                   float* __restrict accum, int64_t n, float lr,
                   float epsilon) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    accum[i] += g[i] * g[i];
    w[i] -= lr * g[i] / (std::sqrt(accum[i]) + epsilon);
  }
}

}  // namespace

Adagrad::Adagrad(AdagradOptions options)
    : Optimizer("Adagrad", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adagrad::SlotSpecs() const {
  return {
      {"accumulator", static_cast<float>(options_.initial_accumulator_value)}};
}

void Adagrad::Update(const Step& step, const UpdateTarget& t) {
  const float lr = static_cast<float>(step.learning_rate);
  const float epsilon = static_cast<float>(options_.epsilon);
  float* const accum = t.slots[0];
  ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
    AdagradKernel(t.value + off, t.grad + goff, accum + off, n, lr, epsilon);
  });
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Adagrad::Hyperparameters() const {
  return {{"initial_accumulator_value", options_.initial_accumulator_value},
          {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
