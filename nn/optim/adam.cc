#include "nn/optim/adam.h"

#include <cmath>

namespace edl::nn::optim {

Adam::Adam(AdamOptions options) : Optimizer("Adam", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adam::SlotSpecs() const {
  if (options_.amsgrad) return {{"m", 0.f}, {"v", 0.f}, {"vhat", 0.f}};
  return {{"m", 0.f}, {"v", 0.f}};
}

Optimizer::Rule Adam::RuleFor(const Step& step) {
  const double tt = static_cast<double>(step.t);
  const double lr_t = step.learning_rate * std::sqrt(1.0 - std::pow(options_.beta_2, tt)) /
                      (1.0 - std::pow(options_.beta_1, tt));
  Rule r{options_.amsgrad ? tensor::UpdateRule::kAmsgrad : tensor::UpdateRule::kAdam, {}};
  r.coefficients.lr = static_cast<float>(lr_t);
  r.coefficients.one_minus_beta_1 = static_cast<float>(1.0 - options_.beta_1);
  r.coefficients.one_minus_beta_2 = static_cast<float>(1.0 - options_.beta_2);
  r.coefficients.epsilon = static_cast<float>(options_.epsilon);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Adam::Hyperparameters() const {
  return {{"beta_1", options_.beta_1},
          {"beta_2", options_.beta_2},
          {"epsilon", options_.epsilon},
          {"amsgrad", options_.amsgrad}};
}

}  // namespace edl::nn::optim
