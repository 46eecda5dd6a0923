// Model: a directed acyclic graph of Keras layer calls, built from a Keras
// model JSON (Sequential, or Functional with inbound_nodes in the Keras 2 /
// TF.js or the Keras 3 format; multi-input, multi-output and shared layers).
// The model owns its layers, its weights and the random generator used for
// initialization (seeded by `seed`) and for dropout.
//
// Thread-safety: one thread at a time (Forward mutates BatchNormalization
// moving statistics and the dropout generator).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "nn/autograd.h"
#include "nn/layers/layer.h"

namespace edl::nn::keras {

using nn::Parameter;
using nn::Var;
using tensor::Shape;
using tensor::Tensor;

struct ModelInput {
  std::string name;     // the InputLayer's name
  Shape shape;          // without the batch axis
  tensor::DType dtype;  // kFloat32, or kInt64 for "int32"/"int64" inputs
};

struct NamedTensor {
  std::string name;
  Tensor value;
};

class Model {
 public:
  // Parses and builds `keras_json` (the text of a Keras model JSON).
  // Errors are InvalidArgument prefixed with `origin` and the JSON path of
  // the model inside it (`json_path`, "" for the root):
  //   model.json: model.config.layers[3] (Conv2D "conv2"): kernel_size ...
  static Result<std::unique_ptr<Model>> FromKerasJson(const std::string& keras_json,
                                                      const std::string& origin,
                                                      const std::string& json_path, uint64_t seed);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<ModelInput>& inputs() const { return inputs_; }
  // The names of the layers producing the outputs, in output order.
  std::vector<std::string> output_names() const;
  // Output shapes without the batch axis.
  std::vector<Shape> output_shapes() const;

  // Runs the model on batch-first inputs (one per inputs(), same order).
  // Float and int64 inputs are converted to the declared dtype.
  // REQUIRES: shapes match inputs() after the batch axis.
  std::vector<Var> Forward(const std::vector<Tensor>& inputs, bool training);
  // The same with one augmentation key per record (CallContext::record_keys;
  // empty: drawn from the model's generator).
  std::vector<Var> Forward(const std::vector<Tensor>& inputs, bool training,
                           const std::vector<uint64_t>& record_keys);
  // The same on Vars, with the caller's context (its dropout generator):
  // a model nested as a layer of another (nn/keras/nested_model.h). Inputs
  // are used as they are.
  std::vector<Var> Run(const std::vector<Var>& inputs, const layers::CallContext& ctx);

  // All weights (trainable and not), unique names "<layer>/<weight>", in
  // Keras order (model.weights): layers in config order, each layer's
  // trainable weights then its non-trainable ones.
  std::vector<Parameter*> parameters();
  std::vector<const Parameter*> parameters() const;
  // The sum of the layers' weight penalties; a zero scalar (on device())
  // when none.
  Var RegularizationLoss();
  // The same, undefined when no layer has a penalty.
  Var LayerPenalties();
  // trainable=false on every layer (a nested model's `trainable: false`):
  // no weight trains and batch normalization runs in inference mode.
  void Freeze();

  // Moves every parameter to `device` (values are copied; gradients are
  // dropped). Inputs to Forward must then be on `device` too.
  void MoveTo(tensor::Device device);
  // Where the parameters live (kCPU until MoveTo).
  tensor::Device device() const { return device_; }

  // Copies `weights` into the parameters. Names match exactly, or by their
  // last two components ("model/dense/kernel:0" -> "dense/kernel"). Every
  // parameter must be given exactly once with its shape; errors name the
  // weight and say what was expected.
  Status SetWeights(const std::vector<NamedTensor>& weights);

  // Like Keras model.summary(): layer (type), output shape, params, and for
  // functional models what each layer is connected to; then the totals.
  std::string Summary() const;

  // The Keras 2 / TF.js model JSON (class_name, config, keras_version,
  // backend) that rebuilds this model, every layer config written out in
  // full; a Sequential model's input is an explicit first InputLayer.
  std::string ToKerasJson() const;
  // The same as a JSON value (a nested model's config is its "config").
  nlohmann::json KerasJson() const;

  // The tightest id bound on int64 input `input_index`: the smallest
  // id_limit (Embedding input_dim, CategoryEncoding num_tokens) among the
  // layers that read it directly, that layer's name and the field; {-1, ""}
  // when no such layer reads it.
  struct IdLimit {
    int64_t input_dim = -1;
    std::string layer;
    std::string description;  // e.g. "Embedding \"e\" has input_dim 10"
  };
  IdLimit InputIdLimit(size_t input_index) const;

  // Which int64 model input each Embedding table reads directly: a worker
  // pulls exactly the rows of the ids it is about to look up.
  struct EmbeddingInput {
    size_t input_index = 0;
    Parameter* table = nullptr;  // "<layer>/embeddings"
  };
  std::vector<EmbeddingInput> EmbeddingInputs();

  uint64_t seed() const { return seed_; }
  bool sequential() const { return sequential_; }

 private:
  tensor::Device device_ = tensor::Device::kCPU;
  friend class ModelBuilder;
  // Which tensor of which call: (layer, node, tensor) as Keras writes it.
  struct TensorRef {
    std::string layer;
    int node = 0;
    int tensor = 0;
  };
  struct Step {
    layers::Layer* layer;
    int node;  // index among the layer's calls
    std::vector<int> input_slots;
    int output_slot;  // the first of num_outputs slots
    int num_outputs = 1;
    std::vector<TensorRef> inbound;  // as in the JSON
  };

  Model() = default;

  std::string name_;
  bool sequential_ = false;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<layers::Layer>> layers_;  // config order
  std::vector<ModelInput> inputs_;
  std::vector<int> input_slots_;
  std::vector<TensorRef> output_refs_;
  std::vector<int> output_slots_;
  std::vector<Step> steps_;         // topological order
  std::vector<Shape> slot_shapes_;  // without the batch axis
};

}  // namespace edl::nn::keras
