// Creates layers from their Keras class name and config object. The
// supported classes and the fields each one reads are listed in
// docs/model-spec.md; unknown fields that do not change the maths (dtype,
// trainable, seed, ...) are ignored, fields edl cannot honour are errors.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/layers/layer.h"

namespace edl::nn::layers {

// Errors are InvalidArgument with a message relative to the config
// ("kernel_size must be 1 or 2 integers, got \"3x3\"", or
// "unsupported layer class \"LSTM\"") for the caller to prefix with where
// the config came from. Honours config "trainable": false.
Result<std::unique_ptr<Layer>> CreateLayer(const std::string& class_name, const std::string& name,
                                           const nlohmann::json& config);

// The class names CreateLayer accepts.
std::vector<std::string> SupportedLayerClasses();

}  // namespace edl::nn::layers
