// Nadam, as tf.keras.optimizers.Nadam (OptimizerV2, TF 2.x, nadam.py; Dozat,
// "Incorporating Nesterov Momentum into Adam", 2016). With t = iterations + 1
// and the momentum schedule mu_i = beta_1 * (1 - 0.5 * 0.96^(decay * i)):
//   S_t = mu_1 * ... * mu_t          (Keras' "momentum_cache" weight)
//   m = beta_1 * m + (1 - beta_1) * g
//   v = beta_2 * v + (1 - beta_2) * g^2
//   m_bar = (1 - mu_t) * g / (1 - S_t) + mu_{t+1} * m / (1 - S_t * mu_{t+1})
//   w -= lr * m_bar / (sqrt(v / (1 - beta_2^t)) + epsilon)
// The config field "decay" (alias "schedule_decay", default 0.004) is this
// schedule's decay, not a learning-rate decay; as in Keras, the learning
// rate is not decayed. S_t is a function of t and is not checkpointed.
// Slots: "m", "v" (zeros). Sparse updates are lazy, see optimizer.h.
#pragma once

#include <mutex>

#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

struct NadamOptions {
  double learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  double schedule_decay = 0.004;
};

class Nadam : public Optimizer {
 public:
  explicit Nadam(NadamOptions options = {});

 protected:
  std::vector<SlotSpec> SlotSpecs() const override;
  Rule RuleFor(const Step& step) override;
  std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const override;
  bool UsesTimeDecay() const override { return false; }

 private:
  double Mu(int64_t i) const;
  // S_t, cached for the last t asked for.
  double MomentumScheduleProduct(int64_t t);

  NadamOptions options_;
  std::mutex cache_mu_;  // guards the two fields below
  int64_t cached_t_ = 0;
  double cached_product_ = 1.0;
};

}  // namespace edl::nn::optim
