#include "nn/optim/nadam.h"

#include <cmath>

namespace edl::nn::optim {

Nadam::Nadam(NadamOptions options) : Optimizer("Nadam", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Nadam::SlotSpecs() const { return {{"m", 0.f}, {"v", 0.f}}; }

double Nadam::Mu(int64_t i) const {
  return options_.beta_1 *
         (1.0 - 0.5 * std::pow(0.96, options_.schedule_decay * static_cast<double>(i)));
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

Optimizer::Rule Nadam::RuleFor(const Step& step) {
  const double mu_t = Mu(step.t);
  const double mu_next = Mu(step.t + 1);
  const double s_t = MomentumScheduleProduct(step.t);
  const double s_next = s_t * mu_next;
  Rule r{tensor::UpdateRule::kNadam, {}};
  tensor::UpdateCoefficients& c = r.coefficients;
  c.beta_1 = static_cast<float>(options_.beta_1);
  c.one_minus_beta_1 = static_cast<float>(1.0 - options_.beta_1);
  c.beta_2 = static_cast<float>(options_.beta_2);
  c.one_minus_beta_2 = static_cast<float>(1.0 - options_.beta_2);
  c.grad_scale = static_cast<float>((1.0 - mu_t) / (1.0 - s_t));
  c.m_scale = static_cast<float>(mu_next / (1.0 - s_next));
  c.v_scale =
      static_cast<float>(1.0 / (1.0 - std::pow(options_.beta_2, static_cast<double>(step.t))));
  c.lr = static_cast<float>(step.learning_rate);
  c.epsilon = static_cast<float>(options_.epsilon);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Nadam::Hyperparameters() const {
  return {{"decay", options_.schedule_decay},
          {"beta_1", options_.beta_1},
          {"beta_2", options_.beta_2},
          {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
