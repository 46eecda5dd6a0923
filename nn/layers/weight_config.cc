#include "nn/layers/weight_config.h"

#include "nn/functional.h"

namespace edl::nn::layers {

nlohmann::json NormalizeKerasObject(const nlohmann::json& value) {
  if (value.is_string()) {
    return {{"class_name", value.get<std::string>()}, {"config", nlohmann::json::object()}};
  }
  nlohmann::json out = {{"class_name", value.value("class_name", "")},
                        {"config", nlohmann::json::object()}};
  if (value.contains("config") && value["config"].is_object()) {
    out["config"] = value["config"];
  }
  return out;
}

WeightInit ReadInitializer(ConfigReader& reader, const char* field, const nlohmann::json& def) {
  const nlohmann::json* v = reader.Get(field);
  const nlohmann::json& chosen = v != nullptr ? *v : def;
  Result<InitializerOptions> options = InitializerFromJson(chosen.dump(), field);
  if (!options.ok()) {
    reader.Fail(options.status());
    return {NormalizeKerasObject(def), InitializerOptions()};
  }
  return {NormalizeKerasObject(chosen), *options};
}

Tensor MakeWeight(const WeightInit& init, const Shape& shape, std::mt19937_64& rng) {
  return Initialize(init.options, shape, rng);
}

WeightPenalty ReadRegularizer(ConfigReader& reader, const char* field) {
  WeightPenalty out;
  const nlohmann::json* v = reader.Get(field);
  if (v == nullptr) return out;
  Result<Regularizer> r = RegularizerFromJson(v->dump(), field);
  if (!r.ok()) {
    reader.Fail(r.status());
    return out;
  }
  out.regularizer = *r;
  out.json = {{"class_name", "L1L2"}, {"config", {{"l1", r->l1}, {"l2", r->l2}}}};
  return out;
}

std::function<Var(const Var&)> WeightPenalty::Function() const {
  if (json.is_null() || regularizer.empty()) return nullptr;
  Regularizer r = regularizer;
  return [r](const Var& w) { return r.Penalty(w); };
}

}  // namespace edl::nn::layers
