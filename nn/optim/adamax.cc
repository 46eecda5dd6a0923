#include "nn/optim/adamax.h"

#include <cmath>

namespace edl::nn::optim {

Adamax::Adamax(AdamaxOptions options)
    : Optimizer("Adamax", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adamax::SlotSpecs() const { return {{"m", 0.f}, {"v", 0.f}}; }

Optimizer::Rule Adamax::RuleFor(const Step& step) {
  Rule r{tensor::UpdateRule::kAdamax, {}};
  r.coefficients.lr = static_cast<float>(
      step.learning_rate / (1.0 - std::pow(options_.beta_1, static_cast<double>(step.t))));
  const float beta_1 = static_cast<float>(options_.beta_1);
  r.coefficients.one_minus_beta_1 = 1.f - beta_1;
  r.coefficients.beta_2 = static_cast<float>(options_.beta_2);
  r.coefficients.epsilon = static_cast<float>(options_.epsilon);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Adamax::Hyperparameters() const {
  return {{"beta_1", options_.beta_1}, {"beta_2", options_.beta_2}, {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
