// ModelSpec: everything edl needs to know about a model before training —
// the Keras model JSON plus loss, optimizer, metrics and input settings,
// and (for a TF.js layers-model) initial weights. Read from one of:
//   * the wrapper {"model": <Keras JSON>, "loss": ..., "optimizer": ...,
//     "metrics": [...], "input": {...}} (docs/model-spec.md);
//   * a bare Keras model JSON (class_name Sequential / Functional / Model);
//     loss, optimizer and metrics then come from flags;
//   * a TF.js layers-model model.json (modelTopology + weightsManifest), with
//     its weight shards read from the same directory and its
//     training_config (or edl's userDefinedMetadata.edl) giving loss,
//     optimizer and metrics;
//   * "zoo:NAME", a spec compiled into the binary (nn/keras/zoo.h).
// Plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/keras/model.h"

namespace edl::nn::keras {

struct ModelSpec {
  std::string origin;      // the path given, or "zoo:NAME"; prefixes errors
  std::string model_json;  // the Keras model JSON (text)
  std::string model_path;  // its JSON path in origin ("model", "", ...)
  // JSON texts; "" when absent.
  std::string loss_json, optimizer_json, metrics_json, input_json;
  // Initial weights from a TF.js weights manifest (empty otherwise).
  std::vector<NamedTensor> initial_weights;
};

// Reads a file path or "zoo:NAME". Malformed input gives InvalidArgument
// naming origin, JSON path and layer; a missing file NotFound / IoError
// naming the path. Loss, optimizer and input are validated here.
Result<ModelSpec> LoadModelSpec(const std::string& model_def);
// The same for JSON text already in memory; `dir` is where TF.js weight
// shards are looked up ("" for the current directory).
Result<ModelSpec> ParseModelSpec(const std::string& text, const std::string& origin,
                                 const std::string& dir);

// Builds the model (weights initialized from `seed`) and applies
// spec.initial_weights if any.
Result<std::unique_ptr<Model>> BuildModel(const ModelSpec& spec, uint64_t seed);

}  // namespace edl::nn::keras
