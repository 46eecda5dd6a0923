// Layers that merge several inputs: Concatenate (along `axis`, counted with
// the batch axis; default -1), Add, Subtract, Multiply, Average, Maximum and
// Minimum (elementwise, with numpy broadcasting between inputs of equal
// rank), and Dot. At least two inputs, as Keras; Subtract and Dot exactly
// two.
#pragma once

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class Concatenate : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Concatenate"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
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
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  ElementwiseMerge(Op op, std::string name) : Layer(std::move(name)), op_(op) {}
  Op op_;
};

// Dot: per sample, the dot product of two inputs along `axes` (one int for
// both, or a pair; counted with the batch axis, negative from the end),
// optionally of their L2-normalized values (`normalize`: the cosine
// similarity). Inputs of rank 1 ([n] . [n] -> [1]) or both of rank 2
// (batched matrix products: [n, m] . [m, k] -> [n, k] for axes (2, 1)).
class Dot : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Dot"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  std::vector<int64_t> axes_;  // as configured: 1 or 2 entries
  bool normalize_ = false;
  int rank_ = 0;             // of each input without the batch axis, when built
  int64_t a0_ = 0, a1_ = 0;  // the contracted axes without the batch axis
};

}  // namespace edl::nn::layers
