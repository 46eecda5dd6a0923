// Making and building one layer in tests: from its class name and Keras
// config (null json, as `{}` in a call gives, is an empty config) for input
// shapes without the batch axis.
#pragma once

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nn/layers/layer_factory.h"
#include "tests/nn/gradient_check.h"
#include "tests/testing/paths.h"

namespace edl::nn::layers::layer_testing {

// The layer, built (CHECKs that it makes and builds).
inline std::unique_ptr<Layer> BuiltLayer(const std::string& cls, nlohmann::json config,
                                         const std::vector<Shape>& in) {
  if (config.is_null()) config = nlohmann::json::object();
  auto l = CreateLayer(cls, config.value("name", "l"), config);
  EDL_CHECK(l.ok()) << l.status().message();
  std::mt19937_64 rng(1);
  auto out = (*l)->Build(in, rng);
  EDL_CHECK(out.ok()) << out.status().message();
  return std::move(*l);
}

// The error making or building the layer (named "l") gives, or "OK".
inline std::string LayerError(const std::string& cls, nlohmann::json config,
                              const std::vector<Shape>& in) {
  if (config.is_null()) config = nlohmann::json::object();
  auto l = CreateLayer(cls, "l", config);
  if (!l.ok()) return l.status().message();
  std::mt19937_64 rng(1);
  auto out = (*l)->Build(in, rng);
  return out.ok() ? "OK" : out.status().message();
}

// tests/nn/layers/testdata/<name> parsed (CHECKs that it exists).
inline nlohmann::json ReadTestData(const std::string& name) {
  std::ifstream in(edl::testing::SourceDir() + "/tests/nn/layers/testdata/" + name);
  EDL_CHECK(in) << "missing tests/nn/layers/testdata/" << name;
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// {"shape": [...], "data": [...]} as a float tensor.
inline Tensor TensorFromJson(const nlohmann::json& j) {
  return Tensor::FromVector(j["shape"].get<Shape>(), j["data"].get<std::vector<float>>());
}

// Sets every weight of l to uniform values in [-1, 1] (biases too, so every
// term of a layer's maths counts in a test).
inline void RandomizeWeights(Layer& l, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (Parameter* p : l.weights()) {
    p->value.CopyFrom(nn::testing::RandomTensor(p->value.shape(), rng));
  }
}

}  // namespace edl::nn::layers::layer_testing
