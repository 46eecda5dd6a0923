// Internal: parses a schedule from an already-parsed JSON value (used by the
// optimizer parser for "learning_rate": {...}). Only .cc files include this.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "nn/optim/learning_rate_schedule.h"

namespace edl::nn::optim {

// `path` names the value ("optimizer.config.learning_rate").
Result<std::unique_ptr<LearningRateSchedule>> ParseLearningRateSchedule(const nlohmann::json& value,
                                                                        const std::string& where,
                                                                        const std::string& path);

}  // namespace edl::nn::optim
