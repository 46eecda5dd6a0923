#include "nn/optim/ftrl.h"

namespace edl::nn::optim {

Ftrl::Ftrl(FtrlOptions options) : Optimizer("Ftrl", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Ftrl::SlotSpecs() const {
  return {{"accumulator", static_cast<float>(options_.initial_accumulator_value)}, {"linear", 0.f}};
}

Optimizer::Rule Ftrl::RuleFor(const Step& step) {
  const double lr = step.learning_rate;
  const double l2 = options_.l2_regularization_strength + options_.beta / (2.0 * lr);
  // p = 0.5 (the default learning_rate_power of -0.5) runs through sqrt.
  Rule r{options_.learning_rate_power == -0.5 ? tensor::UpdateRule::kFtrlSqrt
                                              : tensor::UpdateRule::kFtrl,
         {}};
  tensor::UpdateCoefficients& c = r.coefficients;
  c.lr = static_cast<float>(lr);
  c.inv_lr = static_cast<float>(1.0 / lr);
  c.l1 = static_cast<float>(options_.l1_regularization_strength);
  c.two_l2 = static_cast<float>(2.0 * l2);
  c.two_shrinkage = static_cast<float>(2.0 * options_.l2_shrinkage_regularization_strength);
  c.power = static_cast<float>(-options_.learning_rate_power);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Ftrl::Hyperparameters() const {
  return {{"learning_rate_power", options_.learning_rate_power},
          {"initial_accumulator_value", options_.initial_accumulator_value},
          {"l1_regularization_strength", options_.l1_regularization_strength},
          {"l2_regularization_strength", options_.l2_regularization_strength},
          {"l2_shrinkage_regularization_strength", options_.l2_shrinkage_regularization_strength},
          {"beta", options_.beta}};
}

}  // namespace edl::nn::optim
