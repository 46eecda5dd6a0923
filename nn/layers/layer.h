// Layer: one Keras layer (Dense, Conv2D, ...) with Keras semantics, Keras
// config field names and Keras weight order. A layer is configured from its
// Keras config (nn/layers/layer_factory.h), built once from the shapes of
// its first call (creating its weights with their initializers), and may then
// be called any number of times on inputs of compatible shapes (a shared
// layer in a functional model).
//
// Shapes given to Build exclude the batch axis; Vars given to Call include it.
// Weights are named "<layer name>/<weight>" ("dense_1/kernel") and listed in
// Keras order (layer.weights: trainable weights first, in creation order).
//
// Thread-safety: a layer is used by one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/autograd.h"

namespace edl::nn::layers {

using nn::Parameter;
using nn::Var;
using tensor::Shape;
using tensor::Tensor;

// What a call needs besides its inputs.
struct CallContext {
  bool training = false;
  // Randomness for dropout. REQUIRES: non-null when training.
  std::mt19937_64* rng = nullptr;
  // Training: one key per record of the batch that seeds its random
  // augmentation (nn/layers/augmentation.h: AugmentationKey of the job's
  // seed, the epoch and the record), so that a retried task sees the same
  // images; null: keys are drawn from rng.
  const std::vector<uint64_t>* record_keys = nullptr;
};

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  // The Keras class name ("Conv2D").
  virtual const char* class_name() const = 0;

  // Checks the input shapes (without the batch axis) and returns the output
  // shapes. The first call creates the weights; later calls only check that
  // the shapes fit the existing weights. Errors name the layer:
  //   layer "conv2" (Conv2D): expects rank-3 input [H, W, C], got [784]
  Result<std::vector<Shape>> Build(const std::vector<Shape>& input_shapes, std::mt19937_64& rng);
  bool built() const { return built_; }
  // The output shapes Build would give, without building (for wrappers).
  Result<std::vector<Shape>> OutputShapesFor(const std::vector<Shape>& input_shapes) {
    return OutputShapes(input_shapes);
  }

  // Applies the layer to batch-first inputs. REQUIRES: built with shapes
  // these inputs have (without their batch axis).
  virtual std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) = 0;

  // For layers whose input is integer ids (Embedding, CategoryEncoding): ids
  // must be below this, and `id_limit_field` names the config field that
  // says so; -1 for other layers.
  virtual int64_t id_limit() const { return -1; }
  virtual const char* id_limit_field() const { return ""; }

  // ---- Masks (Keras masking) ----
  // A mask is a float [N, steps] tensor of 1 (a real step) and 0 (padding),
  // made by Embedding(mask_zero=True) or Masking and carried along with the
  // sequence through the layers that take it.
  enum class MaskSupport {
    kNone,         // refuses a masked input (the model does not build)
    kPassThrough,  // works step by step; its output carries the input's mask
    kUse,          // reads the mask (recurrent layers, average pooling)
  };
  virtual MaskSupport mask_support() const { return MaskSupport::kNone; }
  // Whether the first output carries a mask, given which inputs do (build
  // time). Default: a pass-through layer's output is masked when its first
  // input is.
  virtual bool OutputMasked(const std::vector<bool>& inputs_masked) const {
    return mask_support() == MaskSupport::kPassThrough && !inputs_masked.empty() &&
           inputs_masked[0];
  }
  // Call with the inputs' masks (undefined where none); sets *mask to the
  // first output's mask (undefined for none). Default: Call, passing the
  // first input's mask through when OutputMasked says so.
  virtual std::vector<Var> CallWithMasks(const std::vector<Var>& inputs,
                                         const std::vector<Tensor>& masks, const CallContext& ctx,
                                         Tensor* mask);

  // In Keras order (trainable first); pointers stay valid for the layer's
  // lifetime.
  // (Wrappers such as Bidirectional list their inner layers' weights.)
  virtual std::vector<Parameter*> weights();
  // The sum of the weights' regularization penalties; an undefined Var when
  // the layer has none.
  virtual Var RegularizationLoss();

  // The Keras (2 / tf.keras / TF.js) config that recreates this layer, with
  // every field this implementation reads spelled out.
  virtual nlohmann::json Config() const;

  // Sets trainable=false on every weight (config "trainable": false).
  virtual void set_trainable(bool trainable);
  bool trainable() const { return trainable_; }

 protected:
  // Validates shapes and computes output shapes; must check compatibility
  // with existing weights when built().
  virtual Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& input_shapes) = 0;
  // Creates the weights (once, after OutputShapes succeeded).
  virtual Status CreateWeights(const std::vector<Shape>& input_shapes, std::mt19937_64& rng) {
    return Status::Ok();
  }

  using Penalty = std::function<Var(const Var&)>;
  // Adds a weight named "<layer>/<short_name>"; `penalty` may be empty.
  Parameter* AddWeight(const std::string& short_name, Tensor value, bool trainable,
                       Penalty penalty = nullptr);
  // InvalidArgument("layer \"name\" (Class): message").
  Status Error(const std::string& message) const;
  // Fails unless there are exactly n inputs.
  Status ExpectInputs(const std::vector<Shape>& input_shapes, size_t n) const;

 private:
  struct Weight {
    std::unique_ptr<Parameter> param;
    Penalty penalty;
  };
  std::string name_;
  bool built_ = false;
  bool trainable_ = true;
  std::vector<Weight> weights_;
};

}  // namespace edl::nn::layers
