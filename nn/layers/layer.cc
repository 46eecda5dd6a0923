#include "nn/layers/layer.h"

#include <nlohmann/json.hpp>

#include "nn/functional.h"

namespace edl::nn::layers {

Result<std::vector<Shape>> Layer::Build(const std::vector<Shape>& input_shapes,
                                        std::mt19937_64& rng) {
  EDL_ASSIGN_OR_RETURN(std::vector<Shape> outputs, OutputShapes(input_shapes));
  if (!built_) {
    EDL_RETURN_IF_ERROR(CreateWeights(input_shapes, rng));
    built_ = true;
    if (!trainable_) set_trainable(false);
  }
  return outputs;
}

std::vector<Var> Layer::CallWithMasks(const std::vector<Var>& inputs,
                                      const std::vector<Tensor>& masks, const CallContext& ctx,
                                      Tensor* mask) {
  std::vector<bool> masked;
  for (const Tensor& m : masks) masked.push_back(m.defined());
  *mask = OutputMasked(masked) ? masks[0] : Tensor();
  return Call(inputs, ctx);
}

std::vector<Parameter*> Layer::weights() {
  std::vector<Parameter*> out;
  for (auto& w : weights_) {
    if (w.param->trainable) out.push_back(w.param.get());
  }
  for (auto& w : weights_) {
    if (!w.param->trainable) out.push_back(w.param.get());
  }
  return out;
}

Var Layer::RegularizationLoss() {
  Var total;
  for (auto& w : weights_) {
    if (!w.penalty) continue;
    Var p = w.penalty(Use(*w.param));
    total = total.defined() ? fn::Add(total, p) : p;
  }
  return total;
}

nlohmann::json Layer::Config() const {
  return {{"name", name_}, {"trainable", trainable_}, {"dtype", "float32"}};
}

void Layer::set_trainable(bool trainable) {
  trainable_ = trainable;
  if (!trainable) {
    for (auto& w : weights_) {
      w.param->trainable = false;
      w.param->frozen = true;
    }
  }
}

Parameter* Layer::AddWeight(const std::string& short_name, Tensor value, bool trainable,
                            Penalty penalty) {
  auto p = std::make_unique<Parameter>();
  p->name = name_ + "/" + short_name;
  p->value = std::move(value);
  p->trainable = trainable && trainable_;
  p->frozen = !trainable_;
  Parameter* raw = p.get();
  weights_.push_back({std::move(p), std::move(penalty)});
  return raw;
}

Status Layer::Error(const std::string& message) const {
  return InvalidArgument("layer \"" + name_ + "\" (" + class_name() + "): " + message);
}

Status Layer::ExpectInputs(const std::vector<Shape>& input_shapes, size_t n) const {
  if (input_shapes.size() == n) return Status::Ok();
  return Error("expects " + std::to_string(n) + " input" + (n == 1 ? "" : "s") + ", got " +
               std::to_string(input_shapes.size()));
}

}  // namespace edl::nn::layers
