// ModelBuilder: turns a parsed Keras model JSON into a Model (see
// nn/keras/model.h). Sequential models get an implicit input from their
// first layer's batch_input_shape / batch_shape / input_shape (or Keras 3
// build_config) unless they start with an InputLayer; functional models
// resolve inbound_nodes (Keras 2 / TF.js lists or Keras 3 {"args": ...})
// in dependency order, so the layer list need not be sorted. Internal to
// nn/keras.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nn/keras/model.h"

namespace edl::nn::keras {

class ModelBuilder {
 public:
  ModelBuilder(std::string origin, std::string json_path, uint64_t seed);
  Result<std::unique_ptr<Model>> Build(const nlohmann::json& keras);
  // The input of a Sequential model whose layers do not say (a nested
  // Sequential takes its first call's shape).
  void SetDefaultInputShape(Shape shape) { default_input_ = std::move(shape); }

 private:
  using TensorRef = Model::TensorRef;
  struct Pending {
    size_t layer;  // index in model_->layers_
    int node;
    std::vector<TensorRef> refs;
    std::string path;
  };

  // "<origin>: <path>: <message>" (path left out when empty).
  Status Fail(const std::string& path, const std::string& message) const;
  // "<path> (Class \"name\")" for messages about one layer entry.
  static std::string Describe(const std::string& path, const std::string& cls,
                              const std::string& name);

  Status BuildSequential(const nlohmann::json& config, const std::string& path);
  Status BuildFunctional(const nlohmann::json& config, const std::string& path);
  // Reads class_name, name and config of a layer entry and creates the
  // layer (appended to the model); returns its index.
  Result<size_t> AddLayer(const nlohmann::json& entry, const std::string& path);
  Status AddInput(layers::Layer* input_layer);
  // For a Sequential model without InputLayer: an input named
  // "<first layer>_input" from the first layer entry's input shape.
  Status AddImplicitInput(const nlohmann::json& entry, const std::string& path);
  // Builds the layer on the given slots and records the call.
  Status Call(size_t layer, int node, const std::vector<TensorRef>& refs,
              const std::vector<int>& slots, const std::string& path);
  Result<std::vector<TensorRef>> ParseNode(const nlohmann::json& node,
                                           const std::string& path) const;
  Result<TensorRef> ParseRef(const nlohmann::json& ref, const std::string& path) const;
  Result<std::vector<TensorRef>> ParseEnds(const nlohmann::json& config, const char* key,
                                           const std::string& path) const;
  std::string UniqueDefaultName(const std::string& class_name);
  // Creates a model used as a layer (model_builder_nested.cc).
  Result<std::unique_ptr<layers::Layer>> CreateNested(const nlohmann::json& entry,
                                                      const std::string& name,
                                                      const std::string& path);
  // For each nested model of a functional model, the node index of its
  // first call (1 where it keeps a node of its own, as references show).
  void SetNodeOffsets(const nlohmann::json& config, const std::vector<Pending>& pending);
  // Every weight name once across the model, nested models included.
  Status CheckUniqueWeights() const;

  std::string origin_, json_path_;
  std::unique_ptr<Model> model_;
  std::vector<std::string> classes_;  // per layer, as written in the JSON
  std::vector<std::string> paths_;    // per layer
  std::map<std::string, size_t> by_name_;
  std::map<std::pair<std::string, int>, int> slot_of_;
  // The number of outputs of each call (their slots follow slot_of_'s).
  std::map<std::pair<std::string, int>, int> outputs_of_;
  // The slots whose tensors carry a mask.
  std::set<int> slot_masked_;
  // The slot `r` names; an error naming `path` when the call has no such
  // output. REQUIRES: the call was resolved (slot_of_ has it).
  Result<int> SlotOf(const Model::TensorRef& r, const std::string& path) const;
  std::map<std::string, int> default_name_counts_;
  std::optional<Shape> default_input_;
  // A nested model that starts a Sequential, made early to read its input.
  std::unique_ptr<layers::Layer> first_nested_;
  std::map<std::string, int> node_offset_;  // nested model layer -> offset
};

}  // namespace edl::nn::keras
