// Layers that merge several inputs: Concatenate (along `axis`, counted with
// the batch axis; default -1), Add, Subtract, Multiply, Average, Maximum and
// Minimum (elementwise, with numpy broadcasting between inputs of equal
// rank). At least two inputs, as Keras; Subtract exactly two.
#pragma once

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class Concatenate : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Concatenate"; }
  std::vector<Var> Call(const std::vector<Var>& inputs,
                        const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  int64_t axis_ = -1;
};

// Add, Subtract, Multiply, Average, Maximum or Minimum.
class ElementwiseMerge : public Layer {
 public:
  enum class Op { kAdd, kSubtract, kMultiply, kAverage, kMaximum, kMinimum };
  static Result<std::unique_ptr<Layer>> FromConfig(Op op, const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override;
  std::vector<Var> Call(const std::vector<Var>& inputs,
                        const CallContext& ctx) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  ElementwiseMerge(Op op, std::string name) : Layer(std::move(name)), op_(op) {}
  Op op_;
};

}  // namespace edl::nn::layers
