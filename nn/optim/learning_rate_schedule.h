// Learning-rate schedules with Keras' semantics and config names
// (tf.keras.optimizers.schedules, TF 2.x). A schedule maps the optimizer's
// step count `iterations` (0 before the first update; Keras passes
// optimizer.iterations, not iterations + 1) to a learning rate.
//
// Schedules are immutable after construction and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::nn::optim {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual double operator()(int64_t step) const = 0;
  // {"class_name": "ExponentialDecay", "config": {...}} as Keras writes it.
  virtual std::string ConfigJson() const = 0;
};

// initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent
// floored when staircase.
// Ref: keras/optimizers/schedules/learning_rate_schedule.py ExponentialDecay.
class ExponentialDecay : public LearningRateSchedule {
 public:
  // REQUIRES: decay_steps > 0.
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                   bool staircase = false);
  double operator()(int64_t step) const override;
  std::string ConfigJson() const override;

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

// values[0] while step <= boundaries[0], values[i] while
// boundaries[i-1] < step <= boundaries[i], values.back() after the last.
// Ref: Keras PiecewiseConstantDecay.
class PiecewiseConstantDecay : public LearningRateSchedule {
 public:
  // REQUIRES: values.size() == boundaries.size() + 1.
  PiecewiseConstantDecay(std::vector<double> boundaries, std::vector<double> values);
  double operator()(int64_t step) const override;
  std::string ConfigJson() const override;

 private:
  std::vector<double> boundaries_;
  std::vector<double> values_;
};

// initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps))
// + alpha) with s = min(step, decay_steps).
// Ref: Keras CosineDecay (Loshchilov & Hutter, SGDR, arXiv:1608.03983).
class CosineDecay : public LearningRateSchedule {
 public:
  // REQUIRES: decay_steps > 0.
  CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha = 0.0);
  double operator()(int64_t step) const override;
  std::string ConfigJson() const override;

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double alpha_;
};

// Parses {"class_name": "ExponentialDecay" | "PiecewiseConstantDecay" |
// "CosineDecay", "config": {...}} (Keras' serialization; "module" and
// "registered_name" are accepted and ignored). Errors name `where` and the
// field: "model.json: learning_rate.config.decay_steps: expected an integer".
Result<std::unique_ptr<LearningRateSchedule>> LearningRateScheduleFromJson(
    const std::string& json_text, const std::string& where);

}  // namespace edl::nn::optim
