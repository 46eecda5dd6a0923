// Helpers for tests that build models from Keras JSON text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/keras/model.h"

namespace edl::nn::keras::testing {

// Builds `json` (origin "m.json", path "model"), aborting with the error.
inline std::unique_ptr<Model> Build(const std::string& json, uint64_t seed = 1) {
  auto m = Model::FromKerasJson(json, "m.json", "model", seed);
  EDL_CHECK(m.ok()) << m.status().message();
  return std::move(*m);
}

// The error building `json` gives; "OK" when it builds.
inline std::string Error(const std::string& json) {
  auto m = Model::FromKerasJson(json, "m.json", "model", 1);
  return m.ok() ? "OK" : m.status().message();
}

// The model's weight names, in order.
inline std::vector<std::string> Names(Model& m) {
  std::vector<std::string> out;
  for (Parameter* p : m.parameters()) out.push_back(p->name);
  return out;
}

}  // namespace edl::nn::keras::testing
