// Optimizer: applies gradients to named float32 variables with Keras'
// (tf.keras.optimizers, OptimizerV2 of TF 2.x) update rules, defaults and
// config names. One implementation serves local training (Apply over a
// model's Parameters) and the parameter server (ApplyDense/ApplySparse by
// variable name, then FinishStep once per step).
//
// Step counting is Keras': iterations() counts finished steps; an update
// during step k uses t = iterations + 1 for bias corrections and the
// learning rate lr(iterations) = schedule(iterations) / (1 + decay *
// iterations). Gradients are clipped first when clipvalue (elementwise to
// [-clipvalue, clipvalue]) or clipnorm (each variable's gradient to L2 norm
// <= clipnorm) is set, as Keras does.
//
// Per-variable state ("slots", e.g. Adam's m and v) is keyed by variable
// name and created on the first update, shaped like the variable.
//
// Sparse updates are lazy: only the rows in the gradient are read or
// written, slots included; the result for those rows equals the dense
// update's. (Keras' Adam, Nadam and RMSprop(momentum=0) instead decay m/v/rms
// of every row on a sparse update; lazy updates are what TF Addons'
// LazyAdam and every embedding PS do, and they cost O(rows touched).)
//
// Every update runs as one tensor::ApplyUpdate on the variable's device
// (the element rules: tensor/update_rules.h); slots live on that device too.
// On the CPU the results are those of the host loops this replaced, bit for
// bit; clipping and coalescing repeated sparse ids stay on the host for CPU
// tensors and use tensor ops elsewhere.
//
// Thread-safety: updates of different variables may run concurrently;
// updates of the same variable, and FinishStep/set_iterations/RestoreSlots,
// must not overlap with updates of it. Large CPU updates run in parallel
// through OpenMP.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "nn/autograd.h"
#include "nn/optim/learning_rate_schedule.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace edl::nn::optim {

using tensor::Tensor;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every trainable Parameter that has a dense grad and/or a
  // sparse_grad (a parameter with both gets their sum), then FinishStep().
  // Gradients are left as they are.
  void Apply(const std::vector<Parameter*>& params);

  // Updates one variable. REQUIRES: float32, grad.numel() == value.numel(),
  // grad on value's device, and the same shape for `key` every call.
  void ApplyDense(const std::string& key, Tensor& value, const Tensor& grad);
  // Updates rows grad.ids of `table` (REQUIRES: float32, rank >= 1, ids in
  // [0, table.dim(0)), values [n, row size], on table's device). Repeated
  // ids are summed first.
  void ApplySparse(const std::string& key, Tensor& table, const tensor::SparseRows& grad);
  // Ends a step: iterations() += 1.
  void FinishStep() { iterations_.fetch_add(1); }

  int64_t iterations() const { return iterations_.load(); }
  void set_iterations(int64_t iterations) { iterations_.store(iterations); }

  // The learning rate the next update uses (schedule and decay applied).
  double CurrentLearningRate() const;

  // Replaces the constant learning rate by a schedule.
  void set_learning_rate_schedule(std::unique_ptr<LearningRateSchedule> schedule);
  // Keras' time-based decay: lr / (1 + decay * iterations). Default 0.
  void set_decay(double decay) { decay_ = decay; }
  // Gradient clipping; 0 turns it off (the default).
  void set_clipnorm(double clipnorm) { clipnorm_ = clipnorm; }
  void set_clipvalue(double clipvalue) { clipvalue_ = clipvalue; }

  // Keras' class name ("Adam").
  const std::string& class_name() const { return class_name_; }
  // The slot names every variable gets, in Keras' order ({"m", "v"}).
  std::vector<std::string> SlotNames() const;

  // Copies of all slots as {"<key>/<slot>", tensor}, sorted by name
  // (for checkpoints; iterations() is saved separately).
  std::vector<std::pair<std::string, Tensor>> Slots() const;
  // Restores slots saved by Slots() (copies them). Fails, changing nothing,
  // on a name without "/", a slot this optimizer does not keep, or a
  // non-float32 tensor. Variables not mentioned keep their state.
  Status RestoreSlots(const std::vector<std::pair<std::string, Tensor>>& slots);

  // Keras-style {"class_name": "Adam", "config": {"name": "Adam",
  // "learning_rate": 0.001, "decay": 0.0, "beta_1": 0.9, ...}}.
  std::string ConfigJson() const;

 protected:
  using ConfigValue = std::variant<double, bool>;
  struct SlotSpec {
    std::string name;
    float initial_value = 0.f;
  };
  struct Step {
    double learning_rate;  // after schedule and decay
    int64_t t;             // iterations + 1
  };

  Optimizer(std::string class_name, double learning_rate);

  // The slots kept per variable, in Keras' order. Must not change after
  // construction.
  virtual std::vector<SlotSpec> SlotSpecs() const = 0;
  // What an update does at `step`: the element rule (its slots follow
  // SlotSpecs()) and its coefficients, computed in float as the rule's
  // documentation says. Called concurrently for different variables.
  struct Rule {
    tensor::UpdateRule rule;
    tensor::UpdateCoefficients coefficients;
  };
  virtual Rule RuleFor(const Step& step) = 0;
  // The optimizer's own config fields, after "learning_rate" and "decay".
  virtual std::vector<std::pair<std::string, ConfigValue>> Hyperparameters() const = 0;
  // False for Nadam, whose "decay" config field means something else.
  virtual bool UsesTimeDecay() const { return true; }

 private:
  struct VariableSlots {
    tensor::Shape shape;
    std::vector<Tensor> slots;  // follows SlotSpecs(); undefined until used
  };

  // The slots of `key` (handles sharing their data), created on value's
  // device (or checked against value's shape, and moved to its device).
  std::vector<Tensor> SlotsFor(const std::string& key, const Tensor& value);
  Step CurrentStep() const;
  // Runs this step's rule on value (rows ids of it when ids is defined).
  void Update(const std::string& key, Tensor& value, const Tensor& grad, const Tensor& ids);
  bool clipping() const { return clipnorm_ > 0 || clipvalue_ > 0; }

  std::string class_name_;
  double learning_rate_;
  std::unique_ptr<LearningRateSchedule> schedule_;
  double decay_ = 0;
  double clipnorm_ = 0;
  double clipvalue_ = 0;
  std::atomic<int64_t> iterations_{0};

  mutable std::mutex mu_;  // guards the map state_ (not the slots' data)
  std::map<std::string, VariableSlots> state_;
};

}  // namespace edl::nn::optim
