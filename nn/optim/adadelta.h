// Adadelta, as tf.keras.optimizers.Adadelta (OptimizerV2, TF 2.x; kernel
// ResourceApplyAdadelta; Zeiler, arXiv:1212.5701):
//   accum_grad = rho * accum_grad + (1 - rho) * g^2
//   u = sqrt(accum_var + epsilon) / sqrt(accum_grad + epsilon) * g
//   w -= lr * u
//   accum_var = rho * accum_var + (1 - rho) * u^2
// Slots: "accum_grad", "accum_var" (zeros).
#pragma once

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct AdadeltaOptions {
  double learning_rate = 0.001;
  double rho = 0.95;
  double epsilon = 1e-7;
};

class Adadelta : public Optimizer {
 public:
  explicit Adadelta(AdadeltaOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;

 private:
  AdadeltaOptions options_;
};

}  // namespace edl::nn::optim
