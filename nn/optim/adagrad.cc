#include "nn/optim/adagrad.h"

namespace edl::nn::optim {

Adagrad::Adagrad(AdagradOptions options)
    : Optimizer("Adagrad", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Adagrad::SlotSpecs() const {
  return {{"accumulator", static_cast<float>(options_.initial_accumulator_value)}};
}

Optimizer::Rule Adagrad::RuleFor(const Step& step) {
  Rule r{tensor::UpdateRule::kAdagrad, {}};
  r.coefficients.lr = static_cast<float>(step.learning_rate);
  r.coefficients.epsilon = static_cast<float>(options_.epsilon);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Adagrad::Hyperparameters() const {
  return {{"initial_accumulator_value", options_.initial_accumulator_value},
          {"epsilon", options_.epsilon}};
}

}  // namespace edl::nn::optim
