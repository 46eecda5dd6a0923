// Adamax, as tf.keras.optimizers.Adamax (OptimizerV2, TF 2.x; kernel
// ResourceApplyAdaMax; Kingma & Ba, arXiv:1412.6980 §7). With
// t = iterations + 1:
//   m = m + (g - m) * (1 - beta_1)
//   v = max(beta_2 * v, |g|)
//   w -= lr / (1 - beta_1^t) * m / (v + epsilon)
// Slots: "m", "v" (zeros). Keras' sparse Adamax is lazy too.
#pragma once

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct AdamaxOptions {
  double learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
};

class Adamax : public Optimizer {
 public:
  explicit Adamax(AdamaxOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;

 private:
  AdamaxOptions options_;
};

}  // namespace edl::nn::optim
