// Structural layers without weights: InputLayer (declares a model input:
// shape without the batch axis and dtype), Flatten, Reshape (target_shape,
// one -1 allowed) and Dropout (inverted dropout with `rate` in training,
// identity otherwise).
#pragma once

#include <optional>

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class InputLayer : public Layer {
 public:
  // Reads batch_input_shape (Keras 2 / TF.js), batch_shape (Keras 3) or
  // input_shape, and dtype ("float32"; "int32"/"int64" become kInt64).
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  // An input for a Sequential model whose first layer carries the shape.
  InputLayer(std::string name, Shape shape, tensor::DType dtype)
      : Layer(std::move(name)), shape_(std::move(shape)), dtype_(dtype) {}
  const char* class_name() const override { return "InputLayer"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override {
    return inputs;
  }
  nlohmann::json Config() const override;
  const Shape& shape() const { return shape_; }
  tensor::DType dtype() const { return dtype_; }

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override {
    return std::vector<Shape>{shape_};
  }

 private:
  Shape shape_;
  tensor::DType dtype_ = tensor::DType::kFloat32;
};

// Reads a Keras shape field of `config` that includes the batch axis
// (batch_input_shape / batch_shape) or excludes it (input_shape). Returns
// the shape without the batch axis, or nullopt when none of them is there.
// Errors name the field: "batch_input_shape must ... got [null, null]".
Result<std::optional<Shape>> ReadInputShape(const nlohmann::json& config);
// "float32" -> kFloat32, "int32"/"int64" -> kInt64 (a Keras 3 dtype policy
// object is read by its name).
Result<tensor::DType> ReadDType(const nlohmann::json& config);

class Flatten : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Flatten"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
};

class Reshape : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Reshape"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  Shape target_shape_;  // as configured, may hold one -1
};

class Dropout : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Dropout"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  float rate_ = 0.f;
};

}  // namespace edl::nn::layers
