#include "nn/keras/model_spec.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "data/input_spec.h"
#include "nn/keras/json_text.h"
#include "nn/keras/tfjs_weights.h"
#include "nn/keras/zoo.h"
#include "nn/layers/config_reader.h"
#include "nn/losses.h"
#include "nn/optim/optimizer_from_json.h"

namespace edl::nn::keras {
namespace {

using nlohmann::json;

// "categoricalCrossentropy" -> "categorical_crossentropy" (TF.js names).
std::string SnakeName(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isupper(static_cast<unsigned char>(c)) && !out.empty() &&
        std::islower(static_cast<unsigned char>(out.back()))) {
      out += '_';
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

json SnakeNames(const json& j) {
  if (j.is_string()) return SnakeName(j.get<std::string>());
  if (j.is_array()) {
    json out = json::array();
    for (const json& e : j) out.push_back(SnakeNames(e));
    return out;
  }
  return j;
}

std::string DumpOrEmpty(const json& j) { return j.is_null() ? "" : j.dump(); }

Status Validate(const ModelSpec& spec) {
  if (!spec.loss_json.empty()) {
    Result<LossOptions> loss = LossOptionsFromJson(spec.loss_json, spec.origin + ": loss");
    if (!loss.ok()) return loss.status();
  }
  if (!spec.optimizer_json.empty()) {
    auto opt = optim::OptimizerFromJson(spec.optimizer_json, spec.origin + ": optimizer");
    if (!opt.ok()) return opt.status();
  }
  if (!spec.input_json.empty()) {
    auto input = data::InputSpecFromJson(spec.input_json, spec.origin + ": input");
    if (!input.ok()) return input.status();
  }
  return Status::Ok();
}

Status ParseWrapper(const json& j, ModelSpec& spec) {
  for (const auto& [key, value] : j.items()) {
    if (key != "model" && key != "loss" && key != "optimizer" && key != "metrics" &&
        key != "input") {
      return InvalidArgument(spec.origin + ": unknown field \"" + key +
                             "\"; a model spec has model, loss, optimizer, metrics, input");
    }
  }
  if (!j["model"].is_object()) {
    return InvalidArgument(spec.origin + ": model must be a Keras model JSON object");
  }
  spec.model_json = j["model"].dump();
  spec.model_path = "model";
  spec.loss_json = DumpOrEmpty(j.value("loss", json()));
  spec.optimizer_json = DumpOrEmpty(j.value("optimizer", json()));
  const json& metrics = j.value("metrics", json());
  if (!metrics.is_null() && !metrics.is_array()) {
    return InvalidArgument(spec.origin + ": metrics must be a list, got " + metrics.dump());
  }
  spec.metrics_json = DumpOrEmpty(metrics);
  const json& input = j.value("input", json());
  if (!input.is_null() && !input.is_object()) {
    return InvalidArgument(spec.origin + ": input must be an object, got " + input.dump());
  }
  spec.input_json = DumpOrEmpty(input);
  return Status::Ok();
}

Status ParseTfjs(const json& j, const std::string& dir, ModelSpec& spec) {
  const json& topology = j["modelTopology"];
  if (!topology.is_object()) {
    return InvalidArgument(spec.origin + ": modelTopology must be an object");
  }
  json training = j.value("trainingConfig", json());
  if (topology.contains("model_config")) {
    spec.model_json = topology["model_config"].dump();
    spec.model_path = "modelTopology.model_config";
    if (topology.contains("training_config")) training = topology["training_config"];
  } else {
    spec.model_json = topology.dump();
    spec.model_path = "modelTopology";
  }
  if (training.is_object()) {
    spec.loss_json = DumpOrEmpty(SnakeNames(training.value("loss", json())));
    spec.optimizer_json = DumpOrEmpty(training.value("optimizer_config", json()));
    spec.metrics_json = DumpOrEmpty(SnakeNames(training.value("metrics", json())));
  }
  const json& meta = j.value("userDefinedMetadata", json());
  if (meta.is_object() && meta.contains("edl") && meta["edl"].is_object()) {
    const json& edl = meta["edl"];
    if (edl.contains("loss")) spec.loss_json = DumpOrEmpty(edl["loss"]);
    if (edl.contains("optimizer")) spec.optimizer_json = DumpOrEmpty(edl["optimizer"]);
    if (edl.contains("metrics")) spec.metrics_json = DumpOrEmpty(edl["metrics"]);
    if (edl.contains("input")) spec.input_json = DumpOrEmpty(edl["input"]);
  }
  if (j.contains("weightsManifest")) {
    EDL_ASSIGN_OR_RETURN(spec.initial_weights,
                         ReadTfjsWeights(j["weightsManifest"].dump(), dir, spec.origin));
  }
  return Status::Ok();
}

}  // namespace

Result<ModelSpec> ParseModelSpec(const std::string& text, const std::string& origin,
                                 const std::string& dir) {
  EDL_ASSIGN_OR_RETURN(json j, ParseJsonText(text, origin));
  ModelSpec spec;
  spec.origin = origin;
  if (!j.is_object()) {
    return InvalidArgument(origin + ": a model spec must be a JSON object, got " +
                           layers::Describe(j));
  }
  if (j.contains("modelTopology")) {
    EDL_RETURN_IF_ERROR(ParseTfjs(j, dir, spec));
  } else if (j.contains("model")) {
    EDL_RETURN_IF_ERROR(ParseWrapper(j, spec));
  } else if (j.contains("class_name")) {
    spec.model_json = text;
    spec.model_path = "";
  } else {
    return InvalidArgument(origin +
                           ": expected a model spec ({\"model\": ...}), a Keras "
                           "model JSON (\"class_name\") or a TF.js model.json "
                           "(\"modelTopology\")");
  }
  EDL_RETURN_IF_ERROR(Validate(spec));
  return spec;
}

Result<ModelSpec> LoadModelSpec(const std::string& model_def) {
  if (model_def.starts_with("zoo:")) {
    EDL_ASSIGN_OR_RETURN(std::string text, ZooSpecJson(model_def.substr(4)));
    return ParseModelSpec(text, model_def, "");
  }
  EDL_ASSIGN_OR_RETURN(std::string text, ReadFile(model_def));
  size_t slash = model_def.rfind('/');
  std::string dir = slash == std::string::npos ? "" : model_def.substr(0, slash);
  return ParseModelSpec(text, model_def, dir);
}

Result<std::unique_ptr<Model>> BuildModel(const ModelSpec& spec, uint64_t seed) {
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                       Model::FromKerasJson(spec.model_json, spec.origin, spec.model_path, seed));
  if (!spec.initial_weights.empty()) {
    Status s = model->SetWeights(spec.initial_weights);
    if (!s.ok()) return s.WithPrefix(spec.origin + ": weightsManifest");
  }
  return model;
}

}  // namespace edl::nn::keras
