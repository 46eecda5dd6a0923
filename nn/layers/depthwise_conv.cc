#include "nn/layers/depthwise_conv.h"

#include "nn/functional.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> DepthwiseConv2D::FromConfig(const std::string& name,
                                                           const nlohmann::json& config) {
  return Read(false, name, config);
}

Result<std::unique_ptr<Layer>> DepthwiseConv2D::FromConfigSeparable(const std::string& name,
                                                                    const nlohmann::json& config) {
  return Read(true, name, config);
}

Result<std::unique_ptr<Layer>> DepthwiseConv2D::Read(bool separable, const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<DepthwiseConv2D> l(new DepthwiseConv2D(name));
  l->separable_ = separable;
  ConfigReader r(config);
  if (separable) {
    l->filters_ = r.RequiredInt("filters");
    if (r.status().ok() && l->filters_ <= 0) r.Fail("filters", "must be positive");
  }
  l->window_ = ReadConvWindow(r, 2);
  l->multiplier_ = r.Int("depth_multiplier", 1);
  if (r.status().ok() && l->multiplier_ <= 0) r.Fail("depth_multiplier", "must be positive");
  EDL_ASSIGN_OR_RETURN(l->activation_, ParseActivation(r.String("activation", "linear")));
  l->use_bias_ = r.Bool("use_bias", true);
  l->depthwise_init_ = ReadInitializer(r, "depthwise_initializer", "GlorotUniform");
  l->bias_init_ = ReadInitializer(r, "bias_initializer", "Zeros");
  l->depthwise_reg_ = ReadRegularizer(r, "depthwise_regularizer");
  l->bias_reg_ = ReadRegularizer(r, "bias_regularizer");
  r.ExpectNull("activity_regularizer");
  r.ExpectNull("depthwise_constraint");
  r.ExpectNull("bias_constraint");
  if (separable) {
    l->pointwise_init_ = ReadInitializer(r, "pointwise_initializer", "GlorotUniform");
    l->pointwise_reg_ = ReadRegularizer(r, "pointwise_regularizer");
    r.ExpectNull("pointwise_constraint");
  }
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> DepthwiseConv2D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(in[0]));
  }
  if (in_channels_ >= 0 && in[0][2] != in_channels_) {
    return Error("was built for " + std::to_string(in_channels_) + " input channels, got " +
                 tensor::ShapeString(in[0]));
  }
  auto size = window_.OutputSize(in[0]);
  if (!size.ok())
    return Error("input " + tensor::ShapeString(in[0]) + " " + size.status().message());
  const int64_t channels = separable_ ? filters_ : in[0][2] * multiplier_;
  return std::vector<Shape>{{(*size)[0], (*size)[1], channels}};
}

Status DepthwiseConv2D::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_channels_ = in[0][2];
  const int64_t depth = in_channels_ * multiplier_;
  depthwise_ = AddWeight(
      "depthwise_kernel",
      MakeWeight(depthwise_init_,
                 {window_.kernel_size[0], window_.kernel_size[1], in_channels_, multiplier_}, rng),
      true, depthwise_reg_.Function());
  if (separable_) {
    pointwise_ =
        AddWeight("pointwise_kernel", MakeWeight(pointwise_init_, {1, 1, depth, filters_}, rng),
                  true, pointwise_reg_.Function());
  }
  if (use_bias_) {
    bias_ = AddWeight("bias", MakeWeight(bias_init_, {separable_ ? filters_ : depth}, rng), true,
                      bias_reg_.Function());
  }
  return Status::Ok();
}

std::vector<Var> DepthwiseConv2D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  const Shape s(x.shape().begin() + 1, x.shape().end());
  tensor::Conv2DParams p = window_.ParamsFor(s);
  p.groups = in_channels_;
  // [kh, kw, C, M] is the grouped kernel [kh, kw, 1, C * M].
  const Var kernel = fn::Reshape(Use(*depthwise_), {window_.kernel_size[0], window_.kernel_size[1],
                                                    1, in_channels_ * multiplier_});
  Var y = fn::Conv2D(x, kernel, separable_ || !bias_ ? Var() : Use(*bias_), p);
  if (separable_) y = fn::Conv2D(y, Use(*pointwise_), bias_ ? Use(*bias_) : Var(), {});
  return {ApplyActivation(activation_, y)};
}

nlohmann::json DepthwiseConv2D::Config() const {
  nlohmann::json c = Layer::Config();
  if (separable_) c["filters"] = filters_;
  window_.ToConfig(c);
  c["depth_multiplier"] = multiplier_;
  c["activation"] = ActivationName(activation_);
  c["use_bias"] = use_bias_;
  c["depthwise_initializer"] = depthwise_init_.json;
  c["bias_initializer"] = bias_init_.json;
  c["depthwise_regularizer"] = depthwise_reg_.json;
  c["bias_regularizer"] = bias_reg_.json;
  c["activity_regularizer"] = nullptr;
  c["depthwise_constraint"] = nullptr;
  c["bias_constraint"] = nullptr;
  if (separable_) {
    c["pointwise_initializer"] = pointwise_init_.json;
    c["pointwise_regularizer"] = pointwise_reg_.json;
    c["pointwise_constraint"] = nullptr;
  }
  return c;
}

}  // namespace edl::nn::layers
