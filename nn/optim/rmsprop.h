// RMSprop, as tf.keras.optimizers.RMSprop (OptimizerV2, TF 2.x; Hinton,
// Coursera lecture 6e). Keras uses two different formulas:
//   momentum == 0 (Python code in rmsprop.py):
//     rms = rho * rms + (1 - rho) * g^2
//     mg  = rho * mg + (1 - rho) * g                 (centered only)
//     w  -= lr * g / (sqrt(rms [- mg^2]) + epsilon)
//   momentum > 0 (kernels ResourceApply[Centered]RMSProp):
//     rms = rms + (g^2 - rms) * (1 - rho)
//     mg  = mg + (g - mg) * (1 - rho)                 (centered only)
//     mom = momentum * mom + lr * g / sqrt(rms [- mg^2] + epsilon)
//     w  -= mom
// Slots: "rms" (zeros), "momentum" when momentum > 0, "mg" when centered.
// Sparse updates are lazy (Keras decays rms of every row when momentum is
// 0), see optimizer.h.
#pragma once

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct RmspropOptions {
  double learning_rate = 0.001;
  double rho = 0.9;
  double momentum = 0.0;
  double epsilon = 1e-7;
  bool centered = false;
};

class Rmsprop : public Optimizer {
 public:
  explicit Rmsprop(RmspropOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;

 private:
  RmspropOptions options_;
};

}  // namespace edl::nn::optim
