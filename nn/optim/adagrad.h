// Adagrad, as tf.keras.optimizers.Adagrad (OptimizerV2, TF 2.x; kernel
// ResourceApplyAdagradV2; Duchi et al., JMLR 2011):
//   accumulator += g^2
//   w -= lr * g / (sqrt(accumulator) + epsilon)
// Slots: "accumulator" (initial_accumulator_value).
#pragma once

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct AdagradOptions {
  double learning_rate = 0.001;
  double initial_accumulator_value = 0.1;
  double epsilon = 1e-7;
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(AdagradOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;

 private:
  AdagradOptions options_;
};

}  // namespace edl::nn::optim
