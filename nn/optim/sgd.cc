#include "nn/optim/sgd.h"

namespace edl::nn::optim {

namespace {

void PlainKernel(float* __restrict w, const float* __restrict g, int64_t n,
                 float lr) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) w[i] -= lr * g[i];
}

void MomentumKernel(float* __restrict w, const float* __restrict g,
                    float* __restrict a, int64_t n, float lr, float momentum,
                    bool nesterov) {
  if (nesterov) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      a[i] = a[i] * momentum - lr * g[i];
      w[i] += a[i] * momentum - lr * g[i];
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      a[i] = a[i] * momentum - lr * g[i];
      w[i] += a[i];
    }
  }
}

}  // namespace

Sgd::Sgd(SgdOptions options)
    : Optimizer("SGD", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Sgd::SlotSpecs() const {
  if (options_.momentum == 0) return {};
  return {{"momentum", 0.f}};
}

void Sgd::Update(const Step& step, const UpdateTarget& t) {
  const float lr = static_cast<float>(step.learning_rate);
  if (options_.momentum == 0) {
    ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
      PlainKernel(t.value + off, t.grad + goff, n, lr);
    });
    return;
  }
  const float momentum = static_cast<float>(options_.momentum);
  float* const a = t.slots[0];
  const bool nesterov = options_.nesterov;
  ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
    MomentumKernel(t.value + off, t.grad + goff, a + off, n, lr, momentum,
                   nesterov);
  });
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Sgd::Hyperparameters() const {
  return {{"momentum", options_.momentum}, {"nesterov", options_.nesterov}};
}

}  // namespace edl::nn::optim
