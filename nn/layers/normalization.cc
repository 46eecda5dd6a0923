#include "nn/layers/normalization.h"

#include "nn/functional.h"

namespace edl::nn::layers {

void LastAxisNormalization::ReadCommon(ConfigReader& r) {
  axis_ = r.Axis("axis", -1);
  epsilon_ = r.Float("epsilon", 0.001f);
  center_ = r.Bool("center", true);
  scale_ = r.Bool("scale", true);
  beta_init_ = ReadInitializer(r, "beta_initializer", "Zeros");
  gamma_init_ = ReadInitializer(r, "gamma_initializer", "Ones");
  beta_reg_ = ReadRegularizer(r, "beta_regularizer");
  gamma_reg_ = ReadRegularizer(r, "gamma_regularizer");
  r.ExpectNull("beta_constraint");
  r.ExpectNull("gamma_constraint");
}

Status LastAxisNormalization::CheckInput(const std::vector<Shape>& in, const char* unit) const {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  // axis_ counts the batch axis; in[0] does not.
  const int64_t rank = static_cast<int64_t>(in[0].size()) + 1;
  if (in[0].empty() || (axis_ != -1 && axis_ != rank - 1)) {
    return Error("supports only the last axis (axis -1); axis " + std::to_string(axis_) +
                 " of input " + tensor::ShapeString(in[0]) + " is not");
  }
  if (channels_ >= 0 && in[0].back() != channels_) {
    return Error("was built for " + std::to_string(channels_) + " " + unit + ", got " +
                 tensor::ShapeString(in[0]));
  }
  return Status::Ok();
}

void LastAxisNormalization::AddScaleAndOffset(const std::vector<Shape>& in, std::mt19937_64& rng) {
  channels_ = in[0].back();
  Shape c{channels_};
  if (scale_)
    gamma_ = AddWeight("gamma", MakeWeight(gamma_init_, c, rng), true, gamma_reg_.Function());
  if (center_)
    beta_ = AddWeight("beta", MakeWeight(beta_init_, c, rng), true, beta_reg_.Function());
}

std::pair<Var, Var> LastAxisNormalization::ScaleAndOffset(tensor::Device device) {
  Var gamma = gamma_ ? Use(*gamma_) : Var(Tensor::Full({channels_}, 1.f, device));
  Var beta = beta_ ? Use(*beta_) : Var(Tensor::Zeros({channels_}, tensor::DType::kFloat32, device));
  return {gamma, beta};
}

void LastAxisNormalization::WriteCommon(nlohmann::json& c) const {
  c["axis"] = axis_;
  c["epsilon"] = epsilon_;
  c["center"] = center_;
  c["scale"] = scale_;
  c["beta_initializer"] = beta_init_.json;
  c["gamma_initializer"] = gamma_init_.json;
  c["beta_regularizer"] = beta_reg_.json;
  c["gamma_regularizer"] = gamma_reg_.json;
  c["beta_constraint"] = nullptr;
  c["gamma_constraint"] = nullptr;
}

Result<std::unique_ptr<Layer>> BatchNormalization::FromConfig(const std::string& name,
                                                              const nlohmann::json& config) {
  std::unique_ptr<BatchNormalization> l(new BatchNormalization(name));
  ConfigReader r(config);
  l->ReadCommon(r);
  l->momentum_ = r.Float("momentum", 0.99f);
  l->mean_init_ = ReadInitializer(r, "moving_mean_initializer", "Zeros");
  l->variance_init_ = ReadInitializer(r, "moving_variance_initializer", "Ones");
  if (r.Bool("renorm", false)) r.Fail("renorm", "is not supported");
  if (r.Bool("synchronized", false)) r.Fail("synchronized", "is not supported");
  if (r.status().ok() && (l->momentum_ < 0.f || l->momentum_ > 1.f)) {
    r.Fail("momentum", "must be in [0, 1]");
  }
  if (r.status().ok() && l->epsilon_ <= 0.f) r.Fail("epsilon", "must be positive");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> BatchNormalization::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(CheckInput(in, "channels"));
  return in;
}

Status BatchNormalization::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  AddScaleAndOffset(in, rng);
  Shape c{channels_};
  moving_mean_ = AddWeight("moving_mean", MakeWeight(mean_init_, c, rng), false);
  moving_variance_ = AddWeight("moving_variance", MakeWeight(variance_init_, c, rng), false);
  return Status::Ok();
}

std::vector<Var> BatchNormalization::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  auto [gamma, beta] = ScaleAndOffset(inputs[0].value().device());
  return {fn::BatchNorm(inputs[0], gamma, beta, moving_mean_->value, moving_variance_->value,
                        momentum_, epsilon_, ctx.training && trainable())};
}

nlohmann::json BatchNormalization::Config() const {
  nlohmann::json c = Layer::Config();
  WriteCommon(c);
  c["momentum"] = momentum_;
  c["moving_mean_initializer"] = mean_init_.json;
  c["moving_variance_initializer"] = variance_init_.json;
  return c;
}

Result<std::unique_ptr<Layer>> LayerNormalization::FromConfig(const std::string& name,
                                                              const nlohmann::json& config) {
  std::unique_ptr<LayerNormalization> l(new LayerNormalization(name));
  ConfigReader r(config);
  l->ReadCommon(r);
  if (r.Bool("rms_scaling", false)) r.Fail("rms_scaling", "is not supported");
  if (r.status().ok() && l->epsilon_ <= 0.f) r.Fail("epsilon", "must be positive");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> LayerNormalization::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(CheckInput(in, "features"));
  return in;
}

Status LayerNormalization::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  AddScaleAndOffset(in, rng);
  return Status::Ok();
}

std::vector<Var> LayerNormalization::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  auto [gamma, beta] = ScaleAndOffset(inputs[0].value().device());
  return {fn::LayerNorm(inputs[0], gamma, beta, epsilon_)};
}

nlohmann::json LayerNormalization::Config() const {
  nlohmann::json c = Layer::Config();
  WriteCommon(c);
  return c;
}

}  // namespace edl::nn::layers
