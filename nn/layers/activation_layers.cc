#include "nn/layers/activation_layers.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> ActivationLayer::FromConfig(const std::string& name,
                                                           const nlohmann::json& config) {
  std::unique_ptr<ActivationLayer> l(new ActivationLayer(name));
  ConfigReader r(config);
  if (r.Get("activation") == nullptr) r.Fail("activation", "is required");
  std::string activation = r.String("activation", "linear");
  EDL_RETURN_IF_ERROR(r.status());
  EDL_ASSIGN_OR_RETURN(l->kind_, ParseActivation(activation));
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> ActivationLayer::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return in;
}

std::vector<Var> ActivationLayer::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return {ApplyActivation(kind_, inputs[0])};
}

nlohmann::json ActivationLayer::Config() const {
  nlohmann::json c = Layer::Config();
  c["activation"] = ActivationName(kind_);
  return c;
}

Result<std::unique_ptr<Layer>> ReLU::FromConfig(const std::string& name,
                                                const nlohmann::json& config) {
  std::unique_ptr<ReLU> l(new ReLU(name));
  ConfigReader r(config);
  l->max_value_ = r.OptionalFloat("max_value");
  l->negative_slope_ = r.Float("negative_slope", 0.f);
  if (r.Float("threshold", 0.f) != 0.f) {
    r.Fail("threshold", "other than 0 is not supported");
  }
  if (l->max_value_ && *l->max_value_ < 0.f) r.Fail("max_value", "must be >= 0");
  if (l->negative_slope_ < 0.f) r.Fail("negative_slope", "must be >= 0");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> ReLU::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return in;
}

std::vector<Var> ReLU::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  if (max_value_ && negative_slope_ == 0.f) {
    // ReLU6 and kin: one clip.
    return {fn::Activation(tensor::Eltwise::kClip, inputs[0], 0.f, *max_value_)};
  }
  Var y = fn::Activation(tensor::Eltwise::kRelu, inputs[0], negative_slope_);
  if (max_value_) {
    y = fn::Minimum(y, Var(Tensor::Scalar(*max_value_, y.value().device())));
  }
  return {y};
}

nlohmann::json ReLU::Config() const {
  nlohmann::json c = Layer::Config();
  c["max_value"] = max_value_ ? nlohmann::json(*max_value_) : nlohmann::json();
  c["negative_slope"] = negative_slope_;
  c["threshold"] = 0.0;
  return c;
}

Result<std::unique_ptr<Layer>> Softmax::FromConfig(const std::string& name,
                                                   const nlohmann::json& config) {
  std::unique_ptr<Softmax> l(new Softmax(name));
  ConfigReader r(config);
  l->axis_ = r.Axis("axis", -1);
  EDL_RETURN_IF_ERROR(r.status());
  if (l->axis_ == 0) return InvalidArgument("axis 0 is the batch axis");
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Softmax::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  int64_t rank = static_cast<int64_t>(in[0].size()) + 1;
  if (axis_ >= rank || axis_ < -rank + 1 || in[0].empty()) {
    return Error("axis " + std::to_string(axis_) + " is out of range for input " +
                 tensor::ShapeString(in[0]));
  }
  return in;
}

std::vector<Var> Softmax::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return {fn::Softmax(inputs[0], static_cast<int>(axis_))};
}

nlohmann::json Softmax::Config() const {
  nlohmann::json c = Layer::Config();
  c["axis"] = axis_;
  return c;
}

}  // namespace edl::nn::layers
