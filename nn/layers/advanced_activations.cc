#include "nn/layers/advanced_activations.h"

#include <algorithm>

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

// ---- LeakyReLU --------------------------------------------------------------

Result<std::unique_ptr<Layer>> LeakyReLU::FromConfig(const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<LeakyReLU> l(new LeakyReLU(name));
  ConfigReader r(config);
  // Keras 3 names the slope negative_slope; Keras 2 and TF.js alpha.
  const char* field = r.Get("negative_slope") != nullptr ? "negative_slope" : "alpha";
  l->alpha_ = r.Float(field, 0.3f);
  if (r.status().ok() && l->alpha_ < 0.f) r.Fail(field, "must be >= 0");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> LeakyReLU::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return in;
}

std::vector<Var> LeakyReLU::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return {fn::Activation(tensor::Eltwise::kRelu, inputs[0], alpha_)};
}

nlohmann::json LeakyReLU::Config() const {
  nlohmann::json c = Layer::Config();
  c["alpha"] = alpha_;
  return c;
}

// ---- ELU --------------------------------------------------------------------

Result<std::unique_ptr<Layer>> Elu::FromConfig(const std::string& name,
                                               const nlohmann::json& config) {
  std::unique_ptr<Elu> l(new Elu(name));
  ConfigReader r(config);
  l->alpha_ = r.Float("alpha", 1.f);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Elu::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return in;
}

std::vector<Var> Elu::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return {fn::Activation(tensor::Eltwise::kElu, inputs[0], alpha_)};
}

nlohmann::json Elu::Config() const {
  nlohmann::json c = Layer::Config();
  c["alpha"] = alpha_;
  return c;
}

// ---- ThresholdedReLU ---------------------------------------------------------

Result<std::unique_ptr<Layer>> ThresholdedReLU::FromConfig(const std::string& name,
                                                           const nlohmann::json& config) {
  std::unique_ptr<ThresholdedReLU> l(new ThresholdedReLU(name));
  ConfigReader r(config);
  l->theta_ = r.Float("theta", 1.f);
  if (r.status().ok() && l->theta_ < 0.f) r.Fail("theta", "must be >= 0");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> ThresholdedReLU::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return in;
}

std::vector<Var> ThresholdedReLU::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  // x * [x > theta]; the mask is a constant, so the gradient is the mask.
  const Var& x = inputs[0];
  const Tensor host = x.value().On(tensor::Device::kCPU);
  Tensor mask = Tensor::Empty(host.shape());
  const float* px = host.f32();
  float* pm = mask.f32();
  for (int64_t i = 0; i < host.numel(); ++i) pm[i] = px[i] > theta_ ? 1.f : 0.f;
  return {fn::Mul(x, Var(mask.On(x.value().device())))};
}

nlohmann::json ThresholdedReLU::Config() const {
  nlohmann::json c = Layer::Config();
  c["theta"] = theta_;
  return c;
}

// ---- PReLU ------------------------------------------------------------------

Result<std::unique_ptr<Layer>> PReLU::FromConfig(const std::string& name,
                                                 const nlohmann::json& config) {
  std::unique_ptr<PReLU> l(new PReLU(name));
  ConfigReader r(config);
  l->alpha_init_ = ReadInitializer(r, "alpha_initializer", "Zeros");
  l->alpha_reg_ = ReadRegularizer(r, "alpha_regularizer");
  r.ExpectNull("alpha_constraint");
  if (const nlohmann::json* axes = r.Get("shared_axes")) {
    if (axes->is_number_integer()) {
      l->shared_axes_ = {axes->get<int64_t>()};
    } else {
      l->shared_axes_ = r.IntList("shared_axes", /*allow_null_entries=*/false);
    }
    for (int64_t a : l->shared_axes_) {
      if (r.status().ok() && a < 1) {
        r.Fail("shared_axes", "counts axes from 1 (0 is the batch axis), got " + std::to_string(a));
      }
    }
  }
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> PReLU::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  Shape alpha = in[0];
  for (int64_t a : shared_axes_) {
    if (a > static_cast<int64_t>(alpha.size())) {
      return Error("shared_axes " + std::to_string(a) + " is out of range for input " +
                   tensor::ShapeString(in[0]));
    }
    alpha[a - 1] = 1;
  }
  if (built() && alpha != alpha_shape_) {
    return Error("was built for input " + tensor::ShapeString(alpha_shape_) + ", got " +
                 tensor::ShapeString(in[0]));
  }
  alpha_shape_ = alpha;
  return in;
}

Status PReLU::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  alpha_ =
      AddWeight("alpha", MakeWeight(alpha_init_, alpha_shape_, rng), true, alpha_reg_.Function());
  return Status::Ok();
}

std::vector<Var> PReLU::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  // relu(x) + alpha * min(x, 0), alpha broadcast over the batch.
  const Var& x = inputs[0];
  Var pos = fn::Activation(tensor::Eltwise::kRelu, x);
  Shape batched = alpha_shape_;
  batched.insert(batched.begin(), 1);
  Var alpha = fn::Reshape(Use(*alpha_), batched);
  return {fn::Add(pos, fn::Mul(alpha, fn::Sub(x, pos)))};
}

nlohmann::json PReLU::Config() const {
  nlohmann::json c = Layer::Config();
  c["alpha_initializer"] = alpha_init_.json;
  c["alpha_regularizer"] = alpha_reg_.json;
  c["alpha_constraint"] = nullptr;
  c["shared_axes"] = shared_axes_.empty() ? nlohmann::json() : nlohmann::json(shared_axes_);
  return c;
}

}  // namespace edl::nn::layers
