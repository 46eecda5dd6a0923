#include "nn/keras/tfjs_export.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "base/file.h"
#include "nn/keras/json_text.h"

namespace edl::nn::keras {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool IsAugmentation(const json& layer) {
  static const char* kNames[] = {"RandomFlip",        "RandomRotation", "RandomZoom",
                                 "RandomTranslation", "RandomContrast", "RandomBrightness"};
  const std::string cls = layer.value("class_name", "");
  for (const char* n : kNames) {
    if (cls == n) return true;
  }
  return false;
}

// A nested Sequential model left with no layer but its input: the identity.
bool IsIdentityModel(const json& layer) {
  if (layer.value("class_name", "") != "Sequential") return false;
  const json& layers = layer["config"]["layers"];
  for (const json& l : layers) {
    if (l.value("class_name", "") != "InputLayer") return false;
  }
  return true;
}

// Inference as TF.js runs it: the random augmentation layers (identities at
// inference, and unknown to TF.js) are left out, their consumers reading
// their input, also inside nested models (a nested Sequential of
// augmentation layers, Keras' usual pattern, goes as a whole); RandomCrop
// becomes what it computes at inference, Keras' smart_resize (a Resizing
// with crop_to_aspect_ratio, which TF.js computes differently from Keras:
// docs/model-spec.md).
json ForInference(json topology) {
  if (!topology.contains("config") || !topology["config"].is_object()) return topology;
  json& config = topology["config"];
  if (!config.contains("layers") || !config["layers"].is_array()) return topology;
  json& layers = config["layers"];
  for (json& l : layers) {
    if (l.contains("config") && l["config"].is_object() && l["config"].contains("layers")) {
      l = ForInference(std::move(l));  // a nested model
      continue;
    }
    if (l.value("class_name", "") != "RandomCrop") continue;
    json c = l["config"];
    l["class_name"] = "Resizing";
    l["config"] = {{"name", c["name"]},           {"trainable", false},
                   {"dtype", "float32"},          {"height", c["height"]},
                   {"width", c["width"]},         {"interpolation", "bilinear"},
                   {"crop_to_aspect_ratio", true}};
  }
  auto removable = [](const json& l) { return IsAugmentation(l) || IsIdentityModel(l); };
  const bool functional = topology.value("class_name", "") != "Sequential";
  if (!functional) {
    json kept = json::array();
    json pending_shape;  // a removed first layer's batch_input_shape
    for (json& l : layers) {
      if (removable(l)) {
        if (l["config"].contains("batch_input_shape")) {
          pending_shape = l["config"]["batch_input_shape"];
        }
        continue;
      }
      if (!pending_shape.is_null() && !l["config"].contains("batch_input_shape")) {
        l["config"]["batch_input_shape"] = pending_shape;
      }
      pending_shape = json();
      kept.push_back(l);
    }
    layers = kept;
    return topology;
  }
  // Functional: each removed layer's output is its input (layers called
  // once; a shared one stays, and TF.js then refuses the model by name).
  std::map<std::string, json> replaced;  // layer name -> its inbound [name, node, tensor]
  json kept = json::array();
  for (const json& l : layers) {
    if (removable(l) && l.contains("inbound_nodes") && l["inbound_nodes"].size() == 1 &&
        l["inbound_nodes"][0].size() == 1) {
      json src = l["inbound_nodes"][0][0];
      const std::string from = src[0].get<std::string>();
      if (replaced.count(from)) src = replaced[from];
      replaced[l.value("name", "")] = src;
      continue;
    }
    kept.push_back(l);
  }
  auto rewire = [&](json& ref) {
    auto it = replaced.find(ref[0].get<std::string>());
    if (it == replaced.end()) return;
    json fixed = it->second;
    if (ref.size() > 3) fixed[3] = ref[3];  // keep the call's kwargs
    ref = fixed;
  };
  for (json& l : kept) {
    if (!l.contains("inbound_nodes")) continue;
    for (json& node : l["inbound_nodes"]) {
      for (json& ref : node) rewire(ref);
    }
  }
  if (config.contains("output_layers")) {
    for (json& ref : config["output_layers"]) rewire(ref);
  }
  layers = kept;
  return topology;
}

Status WriteAll(const Model& model, const ModelSpec& spec, const fs::path& dir) {
  json weights = json::array();
  std::string bytes;
  for (const Parameter* p : model.parameters()) {
    weights.push_back({{"name", p->name}, {"shape", p->value.shape()}, {"dtype", "float32"}});
    const Tensor host = p->value.On(tensor::Device::kCPU);
    bytes.append(static_cast<const char*>(host.raw_data()), host.bytes());
  }
  EDL_ASSIGN_OR_RETURN(json topology, ParseJsonText(model.ToKerasJson(), "model"));
  topology = ForInference(std::move(topology));
  json edl = json::object();
  auto add = [&](const char* key, const std::string& text) -> Status {
    if (text.empty()) return Status::Ok();
    EDL_ASSIGN_OR_RETURN(edl[key], ParseJsonText(text, spec.origin + ": " + key));
    return Status::Ok();
  };
  EDL_RETURN_IF_ERROR(add("loss", spec.loss_json));
  EDL_RETURN_IF_ERROR(add("optimizer", spec.optimizer_json));
  EDL_RETURN_IF_ERROR(add("metrics", spec.metrics_json));
  EDL_RETURN_IF_ERROR(add("input", spec.input_json));
  json model_json = {
      {"format", "layers-model"},
      {"generatedBy", "edl"},
      {"convertedBy", nullptr},
      {"modelTopology", topology},
      {"weightsManifest", json::array({{{"paths", {"weights.bin"}}, {"weights", weights}}})},
      {"userDefinedMetadata", {{"edl", edl}}},
  };
  EDL_RETURN_IF_ERROR(WriteFileAtomically((dir / "weights.bin").string(), bytes));
  return WriteFileAtomically((dir / "model.json").string(), model_json.dump(1));
}

}  // namespace

Status ExportTfjs(const Model& model, const ModelSpec& spec, const std::string& dir) {
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::random_device rd;
  std::string suffix = std::to_string(rd());
  fs::path tmp = target;
  tmp += ".tmp-" + suffix;
  fs::path old = target;
  old += ".old-" + suffix;
  std::error_code ec;
  fs::create_directories(tmp, ec);
  if (ec) return IoError(tmp.string() + ": cannot create directory: " + ec.message());
  Status s = WriteAll(model, spec, tmp);
  if (!s.ok()) {
    fs::remove_all(tmp, ec);
    return s;
  }
  bool had_old = fs::exists(target, ec);
  if (had_old) {
    fs::rename(target, old, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      return IoError(target.string() + ": cannot replace: " + ec.message());
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::string m = ec.message();
    if (had_old) fs::rename(old, target, ec);
    fs::remove_all(tmp, ec);
    return IoError(target.string() + ": cannot rename the export into place: " + m);
  }
  if (had_old) fs::remove_all(old, ec);
  return Status::Ok();
}

}  // namespace edl::nn::keras
