#include "nn/optim/adadelta.h"

namespace edl::nn::optim {

Adadelta::Adadelta(AdadeltaOptions options)
    : Optimizer("Adadelta", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adadelta::SlotSpecs() const {
  return {{"accum_grad", 0.f}, {"accum_var", 0.f}};
}

Optimizer::Rule Adadelta::RuleFor(const Step& step) {
  Rule r{tensor::UpdateRule::kAdadelta, {}};
  r.coefficients.lr = static_cast<float>(step.learning_rate);
  r.coefficients.rho = static_cast<float>(options_.rho);
  r.coefficients.one_minus_rho = 1.f - r.coefficients.rho;
  r.coefficients.epsilon = static_cast<float>(options_.epsilon);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Adadelta::Hyperparameters() const {
  return {{"rho", options_.rho}, {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
