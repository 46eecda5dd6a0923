// Builds an Optimizer from Keras' JSON: a name ("adam", "Adam", "sgd", ...,
// with Keras' defaults) or {"class_name": "Adam", "config": {...}} as
// tf.keras.optimizers.serialize writes it (TF 2.x and Keras 2.11+ field
// sets; "module" and "registered_name" are ignored). Class names match
// case-insensitively. "lr" is accepted for "learning_rate"; learning_rate may
// be a number or a schedule object (nn/optim/learning_rate_schedule.h).
// Fields edl does not implement are accepted only with their inert values
// ("global_clipnorm", "weight_decay", "loss_scale_factor": null;
// "gradient_accumulation_steps": null or 1; "use_ema": false, which makes
// "ema_momentum" and "ema_overwrite_frequency" inert); any other value is
// refused naming the field.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "nn/optim/optimizer.h"

namespace edl::nn::optim {

// Fails with InvalidArgument naming `where` and the field:
//   model.json: optimizer.config.beta_1: expected a number, got "x"
Result<std::unique_ptr<Optimizer>> OptimizerFromJson(const std::string& json_text,
                                                     const std::string& where);

}  // namespace edl::nn::optim
