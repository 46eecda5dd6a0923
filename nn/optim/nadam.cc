#include "nn/optim/nadam.h"

#include <cmath>

namespace edl::nn::optim {

namespace {

struct NadamCoefficients {
  float beta_1, one_minus_beta_1, beta_2, one_minus_beta_2;
  float grad_scale;  // (1 - mu_t) / (1 - S_t)
  float m_scale;     // mu_{t+1} / (1 - S_t * mu_{t+1})
  float v_scale;     // 1 / (1 - beta_2^t)
  float lr, epsilon;
};

void NadamKernel(float* __restrict w, const float* __restrict g,
                 float* __restrict m, float* __restrict v, int64_t n,
                 const NadamCoefficients& c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    m[i] = c.beta_1 * m[i] + c.one_minus_beta_1 * g[i];
    v[i] = c.beta_2 * v[i] + c.one_minus_beta_2 * g[i] * g[i];
    const float m_bar = c.grad_scale * g[i] + c.m_scale * m[i];
    w[i] -= c.lr * m_bar / (std::sqrt(v[i] * c.v_scale) + c.epsilon);
  }
}

}  // namespace

Nadam::Nadam(NadamOptions options)
    : Optimizer("Nadam", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Nadam::SlotSpecs() const {
  return {{"m", 0.f}, {"v", 0.f}};
}

double Nadam::Mu(int64_t i) const {
  return options_.beta_1 *
         (1.0 - 0.5 * std::pow(0.96, options_.schedule_decay *
                                         static_cast<double>(i)));
}

double Nadam::MomentumScheduleProduct(int64_t t) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (t < cached_t_) {
    cached_t_ = 0;
    cached_product_ = 1.0;
  }
  while (cached_t_ < t) cached_product_ *= Mu(++cached_t_);
  return cached_product_;
}

void Nadam::Update(const Step& step, const UpdateTarget& t) {
  const double mu_t = Mu(step.t);
  const double mu_next = Mu(step.t + 1);
  const double s_t = MomentumScheduleProduct(step.t);
  const double s_next = s_t * mu_next;
  const NadamCoefficients c{
      static_cast<float>(options_.beta_1),
      static_cast<float>(1.0 - options_.beta_1),
      static_cast<float>(options_.beta_2),
      static_cast<float>(1.0 - options_.beta_2),
      static_cast<float>((1.0 - mu_t) / (1.0 - s_t)),
      static_cast<float>(mu_next / (1.0 - s_next)),
      static_cast<float>(
          1.0 / (1.0 - std::pow(options_.beta_2, static_cast<double>(step.t)))),
      static_cast<float>(step.learning_rate),
      static_cast<float>(options_.epsilon)};
  float* const m = t.slots[0];
  float* const v = t.slots[1];
  ForEachSpan(t, [&](int64_t off, int64_t goff, int64_t n) {
    NadamKernel(t.value + off, t.grad + goff, m + off, v + off, n, c);
  });
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>>
Nadam::Hyperparameters() const {
  return {{"decay", options_.schedule_decay},
          {"beta_1", options_.beta_1},
          {"beta_2", options_.beta_2},
          {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
