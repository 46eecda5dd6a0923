// NestedModel: a whole model (Functional / Model / Sequential) used as one
// layer of another, as transfer learning does:
//
//   base = keras.applications.MobileNetV2(include_top=False, ...)
//   base.trainable = False
//   x = base(inputs); x = GlobalAveragePooling2D()(x); outputs = Dense(10)(x)
//
// The inner model is built from the layer entry's own class_name and config
// by the same ModelBuilder as any model, so its errors carry the JSON path
// into the nested config. Its weights keep their own names
// ("<inner layer>/<weight>", as TF.js names them), so the outer model's
// layer names and the nested ones must not collide (ModelBuilder checks).
// `trainable: false` on the entry freezes every inner layer, and a frozen
// BatchNormalization runs in inference mode, as in Keras. Nested models do
// not take masked inputs.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nn/keras/model.h"
#include "nn/layers/layer.h"

namespace edl::nn::keras {

class NestedModel : public layers::Layer {
 public:
  // Whether a layer entry's class names a model.
  static bool IsModelClass(const std::string& class_name);

  // `entry` is the layer entry ({"class_name", "config", ...}) at `path`;
  // `origin` prefixes errors. A model that declares its inputs is built
  // now; a Sequential without an input shape is built by its first call.
  static Result<std::unique_ptr<NestedModel>> Create(const std::string& name,
                                                     const nlohmann::json& entry,
                                                     const std::string& origin,
                                                     const std::string& path, uint64_t seed);

  const char* class_name() const override { return class_name_.c_str(); }
  // The inner model (null until built, for a Sequential without inputs).
  const Model* model() const { return model_.get(); }
  Model* model() { return model_.get(); }
  // The node index of its first call in the outer model's JSON: 1 where
  // the model keeps a node of its own (Keras' functional models; TF.js and
  // Keras 2 Sequentials with an input), else 0. Written back as 1 (an
  // exported nested model always declares its inputs).
  int node_offset() const { return node_offset_; }
  void set_node_offset(int offset) { node_offset_ = offset; }

  std::vector<Var> Call(const std::vector<Var>& inputs, const layers::CallContext& ctx) override;
  std::vector<Parameter*> weights() override;
  Var RegularizationLoss() override;
  nlohmann::json Config() const override;
  void set_trainable(bool trainable) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& input_shapes) override;

 private:
  NestedModel(const std::string& name, std::string class_name, nlohmann::json entry,
              std::string origin, std::string path, uint64_t seed);
  // Builds the inner model; `input` replaces a missing Sequential input.
  Status BuildModel(const std::optional<Shape>& input);

  std::string class_name_;
  nlohmann::json entry_;
  std::string origin_, path_;
  uint64_t seed_;
  std::unique_ptr<Model> model_;
  int node_offset_ = 0;
};

}  // namespace edl::nn::keras
