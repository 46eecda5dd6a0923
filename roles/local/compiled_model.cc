#include "roles/local/compiled_model.h"

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/logging.h"
#include "data/image_list.h"
#include "nn/metrics/metrics_from_json.h"
#include "nn/optim/optimizer_from_json.h"
#include "roles/device_choice.h"
#include "tensor/ops.h"

namespace edl::roles {
using nlohmann::json;

namespace {

// A flag value is either JSON or a bare name ("adam" -> "\"adam\"").
std::string FlagToJson(const std::string& v) {
  if (v.empty()) return v;
  char c = v.front();
  if (c == '{' || c == '[' || c == '"') return v;
  return json(v).dump();
}

// "accuracy,auc" -> ["accuracy","auc"]; JSON passes through.
std::string MetricsFlagToJson(const std::string& v) {
  if (v.empty() || v.front() == '[') return v;
  json list = json::array();
  std::stringstream s(v);
  std::string item;
  while (std::getline(s, item, ',')) {
    if (!item.empty()) list.push_back(item);
  }
  return list.dump();
}

Result<std::string> WithLearningRate(const std::string& optimizer_json, double lr) {
  json j = json::parse(optimizer_json, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("--optimizer: not valid JSON");
  if (j.is_string()) {
    j = json{{"class_name", j.get<std::string>()}, {"config", json::object()}};
  }
  if (!j.is_object()) return InvalidArgument("--learning_rate: optimizer is not an object");
  if (!j.contains("config")) j["config"] = json::object();
  if (!j["config"].is_object()) {
    return InvalidArgument("--optimizer: \"config\" must be an object");
  }
  j["config"]["learning_rate"] = lr;
  return j.dump();
}

CompiledModel::OutputTransform TransformFor(const std::string& loss_json) {
  json j = json::parse(loss_json, nullptr, false);
  std::string name;
  bool from_logits = false;
  if (j.is_string()) {
    name = j.get<std::string>();
  } else if (j.is_object()) {
    name = j.value("class_name", "");
    if (j.contains("config") && j["config"].is_object()) {
      from_logits = j["config"].value("from_logits", false);
    }
  }
  if (!from_logits) return CompiledModel::OutputTransform::kNone;
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(c));
  if (lower.find("binary") != std::string::npos) {
    return CompiledModel::OutputTransform::kSigmoid;
  }
  if (lower.find("categorical") != std::string::npos) {
    return CompiledModel::OutputTransform::kSoftmax;
  }
  return CompiledModel::OutputTransform::kNone;
}

}  // namespace

Result<std::vector<std::unique_ptr<nn::metrics::Metric>>> CompiledModel::MakeMetrics() const {
  json loss = json::parse(spec.loss_json, nullptr, false);
  std::string loss_name = loss.is_string()   ? loss.get<std::string>()
                          : loss.is_object() ? loss.value("class_name", "")
                                             : "";
  return nn::metrics::MetricsFromJson(spec.metrics_json.empty() ? "[]" : spec.metrics_json,
                                      loss_name, spec.origin + ": metrics",
                                      transform != OutputTransform::kNone);
}

tensor::Tensor CompiledModel::ForMetrics(const tensor::Tensor& output) const {
  tensor::Tensor y = output;
  switch (transform) {
    case OutputTransform::kSoftmax: y = tensor::Softmax(output, -1); break;
    case OutputTransform::kSigmoid:
      y = tensor::EltwiseForward(tensor::Eltwise::kSigmoid, output);
      break;
    case OutputTransform::kNone: break;
  }
  return y.On(tensor::Device::kCPU);
}

std::string CompiledModel::SpecJson() const {
  auto part = [](const std::string& text) {
    return text.empty() ? json(nullptr) : json::parse(text, nullptr, false);
  };
  json j = {{"model", part(spec.model_json)}};
  if (!spec.loss_json.empty()) j["loss"] = part(spec.loss_json);
  if (optimizer) {
    j["optimizer"] = part(optimizer->ConfigJson());
  } else if (!spec.optimizer_json.empty()) {
    j["optimizer"] = part(spec.optimizer_json);
  }
  if (!spec.metrics_json.empty()) j["metrics"] = part(spec.metrics_json);
  j["input"] = part(data::InputSpecToJson(input));
  return j.dump();
}

Checkpoint CompiledModel::MakeCheckpoint() const {
  Checkpoint c;
  c.version = optimizer ? optimizer->iterations() : 0;
  c.epoch = epoch;
  c.model_spec_json = SpecJson();
  if (optimizer) c.optimizer_json = optimizer->ConfigJson();
  const tensor::Device host = tensor::Device::kCPU;
  for (nn::Parameter* p : model->parameters()) {
    c.model.push_back({p->name, p->value.On(host)});
  }
  if (optimizer) {
    for (auto& [name, t] : optimizer->Slots()) c.optimizer.push_back({name, t.On(host)});
  }
  return c;
}

Status RestoreCheckpoint(const Checkpoint& checkpoint, CompiledModel& cm,
                         bool with_optimizer_state) {
  std::map<std::string, const tensor::Tensor*> by_name;
  for (const NamedTensor& t : checkpoint.model) by_name[t.name] = &t.value;
  for (nn::Parameter* p : cm.model->parameters()) {
    auto it = by_name.find(p->name);
    if (it == by_name.end()) {
      return InvalidArgument("checkpoint has no weight \"" + p->name + "\" that the model needs");
    }
    if (it->second->shape() != p->value.shape()) {
      return InvalidArgument("checkpoint weight \"" + p->name + "\" has shape " +
                             tensor::ShapeString(it->second->shape()) + ", the model needs " +
                             tensor::ShapeString(p->value.shape()));
    }
    p->value.CopyFrom(*it->second);
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    return InvalidArgument("checkpoint weight \"" + by_name.begin()->first +
                           "\" is not in the model");
  }
  if (cm.optimizer && with_optimizer_state) {
    std::vector<std::pair<std::string, tensor::Tensor>> slots;
    for (const NamedTensor& t : checkpoint.optimizer) slots.emplace_back(t.name, t.value);
    EDL_RETURN_IF_ERROR(cm.optimizer->RestoreSlots(slots));
  }
  if (cm.optimizer) cm.optimizer->set_iterations(checkpoint.version);
  cm.epoch = checkpoint.epoch;
  return Status::Ok();
}

namespace {

// Image data: the class names come from the training data's class folders
// unless the spec (or the checkpoint's) names them; checkpoints and
// exports keep them, so every later reader maps folders to the same ids.
Status NameImageClasses(const ModelOptions& o, const std::optional<Checkpoint>& checkpoint,
                        data::InputSpec& input) {
  if (input.format != data::DataFormat::kImages || !input.image.class_names.empty()) {
    return Status::Ok();
  }
  // A model trained on image folders knows its classes, whatever spec or
  // --input_spec now replaces the one it was saved with.
  if (checkpoint) {
    json saved = json::parse(checkpoint->model_spec_json, nullptr, false);
    if (saved.is_object() && saved.contains("input") && saved["input"].is_object()) {
      auto old = data::InputSpecFromJson(saved["input"].dump(), "the checkpoint's input");
      if (old.ok() && old->format == data::DataFormat::kImages && !old->image.class_names.empty()) {
        input.image.class_names = old->image.class_names;
        return Status::Ok();
      }
    }
  }
  if (o.class_data.empty()) return Status::Ok();
  auto names = data::FindImageClassNames(o.class_data, o.data_index_dir);
  if (!names.ok()) return names.status().WithPrefix("--training_data");
  input.image.class_names = std::move(names).value();
  return Status::Ok();
}

}  // namespace

Result<CompiledModel> CompileModel(const ModelOptions& o) {
  CompiledModel cm;
  EDL_ASSIGN_OR_RETURN(cm.device, ChooseDevice(o.device));
  std::optional<Checkpoint> checkpoint;
  EDL_ASSIGN_OR_RETURN(const std::string init_dir, LocalCheckpointPath(o.checkpoint_dir_for_init));
  if (!init_dir.empty()) {
    auto c = ReadCheckpoint(init_dir);
    if (!c.ok()) return c.status().WithPrefix("--checkpoint_dir_for_init");
    checkpoint = std::move(c).value();
  }
  if (!o.model_def.empty()) {
    auto spec = nn::keras::LoadModelSpec(o.model_def);
    if (!spec.ok()) return spec.status().WithPrefix("--model_def");
    cm.spec = std::move(spec).value();
  } else if (checkpoint) {
    auto spec = nn::keras::ParseModelSpec(checkpoint->model_spec_json, init_dir, "");
    if (!spec.ok()) return spec.status();
    cm.spec = std::move(spec).value();
  } else {
    return InvalidArgument(
        "--model_def is required (a model JSON file, a TF.js "
        "model.json, or zoo:NAME; see `edl zoo list`)");
  }

  if (!o.loss.empty()) cm.spec.loss_json = FlagToJson(o.loss);
  if (!o.optimizer.empty()) cm.spec.optimizer_json = FlagToJson(o.optimizer);
  if (!o.metrics.empty()) cm.spec.metrics_json = MetricsFlagToJson(o.metrics);
  if (cm.spec.loss_json.empty() && !o.for_inference) {
    return InvalidArgument(cm.spec.origin +
                           ": the model spec has no \"loss\"; pass --loss "
                           "(e.g. --loss=sparse_categorical_crossentropy)");
  }
  if (cm.spec.optimizer_json.empty()) {
    EDL_LOG(INFO) << cm.spec.origin << ": no optimizer given; using Adam defaults";
    cm.spec.optimizer_json = "\"adam\"";
  }
  if (o.learning_rate > 0) {
    auto with_lr = WithLearningRate(cm.spec.optimizer_json, o.learning_rate);
    if (!with_lr.ok()) return with_lr.status();
    cm.spec.optimizer_json = *with_lr;
  }

  if (!o.input_spec.empty()) cm.spec.input_json = o.input_spec;
  if (!cm.spec.input_json.empty()) {
    auto input = data::InputSpecFromJson(
        cm.spec.input_json, o.input_spec.empty() ? cm.spec.origin + ": input" : "--input_spec");
    if (!input.ok()) return input.status();
    cm.input = std::move(input).value();
  }
  EDL_RETURN_IF_ERROR(NameImageClasses(o, checkpoint, cm.input));
  if (!cm.spec.loss_json.empty()) {
    auto loss =
        nn::LossFromJson(cm.spec.loss_json, o.loss.empty() ? cm.spec.origin + ": loss" : "--loss");
    if (!loss.ok()) return loss.status();
    cm.loss = std::move(loss).value();
  }
  auto opt = nn::optim::OptimizerFromJson(
      cm.spec.optimizer_json, o.optimizer.empty() ? cm.spec.origin + ": optimizer" : "--optimizer");
  if (!opt.ok()) return opt.status();
  cm.optimizer = std::move(opt).value();
  cm.transform = TransformFor(cm.spec.loss_json);
  // Validate metric names now rather than at the first evaluation.
  auto metrics = cm.MakeMetrics();
  if (!metrics.ok()) return metrics.status();

  auto model = nn::keras::BuildModel(cm.spec, o.seed);
  if (!model.ok()) return model.status();
  cm.model = std::move(model).value();
  const auto& classes = cm.input.image.class_names;
  const auto outputs = cm.model->output_shapes();
  if (cm.input.format == data::DataFormat::kImages && !classes.empty() && outputs.size() == 1 &&
      !outputs[0].empty() && outputs[0].back() > 1 &&
      outputs[0].back() < static_cast<int64_t>(classes.size())) {
    return InvalidArgument(cm.spec.origin + ": the data has " + std::to_string(classes.size()) +
                           " classes (" + classes.front() + " ... " + classes.back() +
                           ") but the model's output has " + std::to_string(outputs[0].back()) +
                           " units; give its last Dense layer one unit per class");
  }
  if (checkpoint) {
    // Slots only make sense for the optimizer that wrote them: evaluation and
    // prediction need none, and training with another optimizer starts fresh.
    bool with_slots = !o.for_inference;
    if (with_slots) {
      json saved = json::parse(
          checkpoint->optimizer_json.empty() ? "null" : checkpoint->optimizer_json, nullptr, false);
      const std::string saved_class =
          saved.is_object() ? saved.value("class_name", "") : std::string();
      if (!saved_class.empty() && saved_class != cm.optimizer->class_name()) {
        EDL_LOG(WARNING) << "--checkpoint_dir_for_init was written with " << saved_class
                         << "; training with " << cm.optimizer->class_name()
                         << " starts its optimizer state afresh";
        with_slots = false;
      }
    }
    Status s = RestoreCheckpoint(*checkpoint, cm, with_slots);
    if (!s.ok()) return s.WithPrefix("--checkpoint_dir_for_init " + o.checkpoint_dir_for_init);
  }
  if (cm.device != tensor::Device::kCPU) cm.model->MoveTo(cm.device);
  return cm;
}

}  // namespace edl::roles
