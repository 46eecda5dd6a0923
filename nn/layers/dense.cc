#include "nn/layers/dense.h"

#include "nn/functional.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Dense::FromConfig(const std::string& name,
                                                 const nlohmann::json& config) {
  std::unique_ptr<Dense> l(new Dense(name));
  ConfigReader r(config);
  l->units_ = r.RequiredInt("units");
  if (r.status().ok() && l->units_ <= 0) r.Fail("units", "must be positive");
  EDL_ASSIGN_OR_RETURN(l->activation_, ParseActivation(r.String("activation", "linear")));
  l->use_bias_ = r.Bool("use_bias", true);
  l->kernel_bias_ = ReadKernelBiasConfig(r);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Dense::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].empty()) {
    return Error("expects input of rank >= 1 [..., features], got []");
  }
  if (in_dim_ >= 0 && in[0].back() != in_dim_) {
    return Error("was built for " + std::to_string(in_dim_) + " input features, got " +
                 tensor::ShapeString(in[0]));
  }
  Shape out = in[0];
  out.back() = units_;
  return std::vector<Shape>{out};
}

Status Dense::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_dim_ = in[0].back();
  kernel_ = AddWeight("kernel", MakeWeight(kernel_bias_.kernel_init, {in_dim_, units_}, rng), true,
                      kernel_bias_.kernel_reg.Function());
  if (use_bias_) {
    bias_ = AddWeight("bias", MakeWeight(kernel_bias_.bias_init, {units_}, rng), true,
                      kernel_bias_.bias_reg.Function());
  }
  return Status::Ok();
}

std::vector<Var> Dense::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Var x = inputs[0];
  Shape shape = x.shape();
  if (shape.size() != 2) x = fn::Reshape(x, {x.value().numel() / in_dim_, in_dim_});
  Var y = fn::Dense(x, Use(*kernel_), bias_ ? Use(*bias_) : Var());
  if (shape.size() != 2) {
    shape.back() = units_;
    y = fn::Reshape(y, shape);
  }
  return {ApplyActivation(activation_, y)};
}

nlohmann::json Dense::Config() const {
  nlohmann::json c = Layer::Config();
  c["units"] = units_;
  c["activation"] = ActivationName(activation_);
  c["use_bias"] = use_bias_;
  WriteKernelBiasConfig(kernel_bias_, c);
  return c;
}

}  // namespace edl::nn::layers
