#include "nn/keras/tfjs_export.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "base/file.h"
#include "nn/keras/json_text.h"

namespace edl::nn::keras {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Status WriteAll(const Model& model, const ModelSpec& spec, const fs::path& dir) {
  json weights = json::array();
  std::string bytes;
  for (const Parameter* p : model.parameters()) {
    weights.push_back({{"name", p->name}, {"shape", p->value.shape()}, {"dtype", "float32"}});
    const Tensor host = p->value.On(tensor::Device::kCPU);
    bytes.append(static_cast<const char*>(host.raw_data()), host.bytes());
  }
  EDL_ASSIGN_OR_RETURN(json topology, ParseJsonText(model.ToKerasJson(), "model"));
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
