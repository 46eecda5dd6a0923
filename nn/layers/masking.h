// Masking (Keras): marks as padding the steps of [steps, features] whose
// features all equal mask_value (default 0). The output is the input with
// padded steps zeroed, and carries the mask to the layers after it
// (recurrent layers, GlobalAveragePooling1D, pass-through layers).
#pragma once

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class Masking : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Masking"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;
  MaskSupport mask_support() const override { return MaskSupport::kUse; }
  bool OutputMasked(const std::vector<bool>&) const override { return true; }
  std::vector<Var> CallWithMasks(const std::vector<Var>& inputs, const std::vector<Tensor>& masks,
                                 const CallContext& ctx, Tensor* mask) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  float mask_value_ = 0.f;
};

}  // namespace edl::nn::layers
