#include "nn/optim/sgd.h"

namespace edl::nn::optim {

Sgd::Sgd(SgdOptions options) : Optimizer("SGD", options.learning_rate), options_(options) {}

std::vector<Optimizer::SlotSpec> Sgd::SlotSpecs() const {
  if (options_.momentum == 0) return {};
  return {{"momentum", 0.f}};
}

Optimizer::Rule Sgd::RuleFor(const Step& step) {
  Rule r{tensor::UpdateRule::kSgd, {}};
  r.coefficients.lr = static_cast<float>(step.learning_rate);
  if (options_.momentum == 0) return r;
  r.rule = options_.nesterov ? tensor::UpdateRule::kSgdNesterov : tensor::UpdateRule::kSgdMomentum;
  r.coefficients.momentum = static_cast<float>(options_.momentum);
  return r;
}

std::vector<std::pair<std::string, Optimizer::ConfigValue>> Sgd::Hyperparameters() const {
  return {{"momentum", options_.momentum}, {"nesterov", options_.nesterov}};
}

}  // namespace edl::nn::optim
