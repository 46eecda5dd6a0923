// FTRL-Proximal, as tf.keras.optimizers.Ftrl (OptimizerV2, TF 2.x; kernels
// ResourceApplyFtrl / ResourceApplyFtrlV2; McMahan et al., "Ad Click
// Prediction: a View from the Trenches", KDD 2013, Algorithm 1). With
// p = -learning_rate_power, l2' = l2 + beta / (2 * lr), and
// g' = g + 2 * l2_shrinkage * w (g' = g when l2_shrinkage is 0):
//   n_new = n + g^2
//   z += g' - (n_new^p - n^p) / lr * w
//   w = (clamp(z, -l1, l1) - z) / (n_new^p / lr + 2 * l2')  (0 when |z| <= l1)
//   n = n_new
// Slots: "accumulator" (n, initial_accumulator_value), "linear" (z, zeros).
#pragma once

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct FtrlOptions {
  double learning_rate = 0.001;
  double learning_rate_power = -0.5;
  double initial_accumulator_value = 0.1;
  double l1_regularization_strength = 0.0;
  double l2_regularization_strength = 0.0;
  double l2_shrinkage_regularization_strength = 0.0;
  double beta = 0.0;
};

class Ftrl : public Optimizer {
 public:
  explicit Ftrl(FtrlOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;

 private:
  FtrlOptions options_;
};

}  // namespace edl::nn::optim
