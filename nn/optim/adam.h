// Adam, as tf.keras.optimizers.Adam (OptimizerV2, TF 2.x; kernels
// ResourceApplyAdam / ResourceApplyAdamWithAmsgrad). With t = iterations + 1:
//   lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
//   m = m + (g - m) * (1 - beta_1)
//   v = v + (g^2 - v) * (1 - beta_2)
//   vhat = max(vhat, v)                                  (amsgrad only)
//   w -= lr_t * m / (sqrt(v or vhat) + epsilon)
// (epsilon is Keras' "epsilon hat" of Kingma & Ba, arXiv:1412.6980 §2.)
// Slots: "m", "v" and, with amsgrad, "vhat" (zeros). Sparse updates are lazy
// (TF Addons' LazyAdam), see optimizer.h.
#pragma once

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct AdamOptions {
  double learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  bool amsgrad = false;
};

class Adam : public Optimizer {
 public:
  explicit Adam(AdamOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;

 private:
  AdamOptions options_;
};

}  // namespace edl::nn::optim
