// SGD with optional (Nesterov) momentum, as tf.keras.optimizers.SGD
// (OptimizerV2, TF 2.x; kernel ResourceApplyKerasMomentum):
//   momentum == 0:  w -= lr * g
//   otherwise:      a = momentum * a - lr * g
//                   w += a                          (nesterov = false)
//                   w += momentum * a - lr * g      (nesterov = true)
// Slots: "momentum" (a, zeros) when momentum > 0.
#pragma once

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct SgdOptions {
  double learning_rate = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
};

class Sgd : public Optimizer {
 public:
  explicit Sgd(SgdOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;

 private:
  SgdOptions options_;
};

}  // namespace edl::nn::optim
