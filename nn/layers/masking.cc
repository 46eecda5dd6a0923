#include "nn/layers/masking.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Masking::FromConfig(const std::string& name,
                                                   const nlohmann::json& config) {
  std::unique_ptr<Masking> l(new Masking(name));
  ConfigReader r(config);
  l->mask_value_ = r.Float("mask_value", 0.f);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Masking::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != 2) {
    return Error("expects rank-2 input [steps, features], got " + tensor::ShapeString(in[0]));
  }
  return in;
}

std::vector<Var> Masking::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Tensor mask;
  return CallWithMasks(inputs, {}, ctx, &mask);
}

std::vector<Var> Masking::CallWithMasks(const std::vector<Var>& inputs,
                                        const std::vector<Tensor>& masks, const CallContext& ctx,
                                        Tensor* mask) {
  const Shape& s = inputs[0].shape();
  const Tensor x = inputs[0].value().On(tensor::Device::kCPU);
  Tensor m = Tensor::Empty({s[0], s[1]});
  for (int64_t i = 0; i < s[0] * s[1]; ++i) {
    bool real = false;
    for (int64_t f = 0; f < s[2] && !real; ++f) real = x.f32()[i * s[2] + f] != mask_value_;
    m.f32()[i] = real ? 1.f : 0.f;
  }
  *mask = m.On(inputs[0].value().device());
  return {fn::Mul(inputs[0], Var(mask->Reshape({s[0], s[1], 1})))};
}

nlohmann::json Masking::Config() const {
  nlohmann::json c = Layer::Config();
  c["mask_value"] = mask_value_;
  return c;
}

}  // namespace edl::nn::layers
