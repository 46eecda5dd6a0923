#include "nn/keras/nested_model.h"

#include "nn/keras/model_builder.h"
#include "nn/layers/core.h"

namespace edl::nn::keras {
namespace {

using nlohmann::json;

// Whether a Sequential config says what its input is (an InputLayer first,
// or an input shape on its first layer); otherwise its first call does.
bool SequentialDeclaresInput(const json& config) {
  const json* list = config.is_array() ? &config : nullptr;
  if (config.is_object() && config.contains("layers")) list = &config["layers"];
  if (list == nullptr || !list->is_array() || list->empty()) return true;  // the builder says why
  const json& first = (*list)[0];
  if (!first.is_object() || !first.contains("config") || !first["config"].is_object()) return true;
  const json cls = first.value("class_name", json());
  if (cls == "InputLayer" || (cls.is_string() && NestedModel::IsModelClass(cls))) return true;
  if (first.contains("build_config")) return true;
  Result<std::optional<Shape>> shape = layers::ReadInputShape(first["config"]);
  return !shape.ok() || shape->has_value();
}

}  // namespace

bool NestedModel::IsModelClass(const std::string& class_name) {
  return class_name == "Functional" || class_name == "Model" || class_name == "Sequential";
}

NestedModel::NestedModel(const std::string& name, std::string class_name, json entry,
                         std::string origin, std::string path, uint64_t seed)
    : Layer(name),
      class_name_(std::move(class_name)),
      entry_(std::move(entry)),
      origin_(std::move(origin)),
      path_(std::move(path)),
      seed_(seed) {}

Result<std::unique_ptr<NestedModel>> NestedModel::Create(const std::string& name, const json& entry,
                                                         const std::string& origin,
                                                         const std::string& path, uint64_t seed) {
  const std::string cls = entry.value("class_name", "");
  EDL_CHECK(IsModelClass(cls)) << cls;
  std::unique_ptr<NestedModel> m(new NestedModel(name, cls, entry, origin, path, seed));
  const json& config = entry["config"];
  if (cls != "Sequential" || SequentialDeclaresInput(config)) {
    EDL_RETURN_IF_ERROR(m->BuildModel(std::nullopt));
  }
  return m;
}

Status NestedModel::BuildModel(const std::optional<Shape>& input) {
  ModelBuilder builder(origin_, path_, seed_);
  if (input) builder.SetDefaultInputShape(*input);
  EDL_ASSIGN_OR_RETURN(model_, builder.Build(entry_));
  if (!trainable()) model_->Freeze();
  return Status::Ok();
}

Result<std::vector<Shape>> NestedModel::OutputShapes(const std::vector<Shape>& input_shapes) {
  if (model_ == nullptr) {
    // A Sequential without an input shape takes its first call's.
    if (input_shapes.size() != 1) {
      return Error("a Sequential model takes 1 input, got " + std::to_string(input_shapes.size()));
    }
    Status built = BuildModel(input_shapes[0]);
    if (!built.ok()) {
      // The builder's message starts with the origin, which the caller adds.
      std::string m = built.message();
      if (m.starts_with(origin_ + ": ")) m = m.substr(origin_.size() + 2);
      return InvalidArgument(m);
    }
  }
  const std::vector<ModelInput>& ins = model_->inputs();
  if (input_shapes.size() != ins.size()) {
    return Error("the nested model takes " + std::to_string(ins.size()) + " input" +
                 (ins.size() == 1 ? "" : "s") + ", got " + std::to_string(input_shapes.size()));
  }
  for (size_t i = 0; i < ins.size(); ++i) {
    if (input_shapes[i] != ins[i].shape) {
      return Error("input " + std::to_string(i) + " is " + tensor::ShapeString(input_shapes[i]) +
                   ", but the nested model's input \"" + ins[i].name + "\" takes " +
                   tensor::ShapeString(ins[i].shape));
    }
  }
  return model_->output_shapes();
}

std::vector<Var> NestedModel::Call(const std::vector<Var>& inputs, const layers::CallContext& ctx) {
  EDL_CHECK(model_ != nullptr) << "nested model \"" << name() << "\" called before it was built";
  return model_->Run(inputs, ctx);
}

std::vector<Parameter*> NestedModel::weights() {
  return model_ ? model_->parameters() : std::vector<Parameter*>();
}

Var NestedModel::RegularizationLoss() { return model_ ? model_->LayerPenalties() : Var(); }

json NestedModel::Config() const {
  EDL_CHECK(model_ != nullptr) << "nested model \"" << name() << "\" is not built";
  json config = model_->KerasJson()["config"];
  config["name"] = name();
  config["trainable"] = trainable();
  return config;
}

void NestedModel::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  if (!trainable && model_ != nullptr) model_->Freeze();
}

}  // namespace edl::nn::keras
