#include "nn/optim/rmsprop.h"

namespace edl::nn::optim {

Rmsprop::Rmsprop(RmspropOptions options)
    : Optimizer("RMSprop", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Rmsprop::SlotSpecs() const {
  std::vector<SlotSpec> specs = {{"rms", 0.f}};
  if (options_.momentum > 0) specs.push_back({"momentum", 0.f});
  if (options_.centered) specs.push_back({"mg", 0.f});
  return specs;
}

Optimizer::Rule Rmsprop::RuleFor(const Step& step) {
  using tensor::UpdateRule;
  Rule r{UpdateRule::kRmsprop, {}};
  if (options_.momentum > 0) {
    r.rule =
        options_.centered ? UpdateRule::kRmspropMomentumCentered : UpdateRule::kRmspropMomentum;
  } else if (options_.centered) {
    r.rule = UpdateRule::kRmspropCentered;
  }
  r.coefficients.lr = static_cast<float>(step.learning_rate);
  r.coefficients.rho = static_cast<float>(options_.rho);
  r.coefficients.one_minus_rho = static_cast<float>(1.0 - options_.rho);
  r.coefficients.momentum = static_cast<float>(options_.momentum);
  r.coefficients.epsilon = static_cast<float>(options_.epsilon);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Rmsprop::Hyperparameters() const {
  return {{"rho", options_.rho},
          {"momentum", options_.momentum},
          {"epsilon", options_.epsilon},
          {"centered", options_.centered}};
}

}  // namespace edl::nn::optim
