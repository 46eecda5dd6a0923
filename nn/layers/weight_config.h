// Reading a layer's initializer and regularizer fields (kernel_initializer,
// kernel_regularizer, ...) and turning them into weight values and
// penalties. Accepts the Keras 2 / TF.js form {"class_name", "config"}, the
// Keras 3 form (with "module" and "registered_name") and a bare name
// ("he_normal"). Internal to nn/layers.
#pragma once

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "nn/initializers.h"
#include "nn/layers/config_reader.h"
#include "nn/layers/layer.h"
#include "nn/regularizer.h"

namespace edl::nn::layers {

// A validated initializer, kept as its normalized Keras 2 JSON
// ({"class_name": ..., "config": {...}}) for Config().
struct WeightInit {
  nlohmann::json json;
  InitializerOptions options;
};

// Reads `field` (default: {"class_name": default_class, "config": {}}).
// Records an error in `reader` for malformed or unsupported initializers.
WeightInit ReadInitializer(ConfigReader& reader, const char* field, const nlohmann::json& def);
Tensor MakeWeight(const WeightInit& init, const Shape& shape, std::mt19937_64& rng);

// A validated regularizer (null json = none).
struct WeightPenalty {
  nlohmann::json json;  // normalized {"class_name": "L1L2", ...}; null when absent
  Regularizer regularizer;
  // The penalty function, or empty when absent.
  std::function<Var(const Var&)> Function() const;
};
WeightPenalty ReadRegularizer(ConfigReader& reader, const char* field);

// {"class_name": name, "config": config} with Keras 3's extra keys dropped;
// a bare string becomes {"class_name": s, "config": {}}.
nlohmann::json NormalizeKerasObject(const nlohmann::json& value);

}  // namespace edl::nn::layers
