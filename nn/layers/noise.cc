#include "nn/layers/noise.h"

#include <cmath>
#include <random>

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

using Kind = NoiseLayer::Kind;

Result<std::unique_ptr<Layer>> NoiseLayer::FromConfig(Kind kind, const std::string& name,
                                                      const nlohmann::json& config) {
  std::unique_ptr<NoiseLayer> l(new NoiseLayer(kind, name));
  ConfigReader r(config);
  const char* field = kind == Kind::kGaussianNoise ? "stddev" : "rate";
  if (r.Get(field) == nullptr) r.Fail(field, "is required");
  l->amount_ = r.Float(field, 0.f);
  if (r.status().ok()) {
    if (kind == Kind::kGaussianNoise && l->amount_ < 0.f) r.Fail(field, "must be >= 0");
    if (kind != Kind::kGaussianNoise && (l->amount_ < 0.f || l->amount_ >= 1.f)) {
      r.Fail(field, "must be in [0, 1), got " + std::to_string(l->amount_));
    }
  }
  r.ExpectNull("noise_shape");
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

const char* NoiseLayer::class_name() const {
  switch (kind_) {
    case Kind::kSpatialDropout1D: return "SpatialDropout1D";
    case Kind::kSpatialDropout2D: return "SpatialDropout2D";
    case Kind::kGaussianNoise: return "GaussianNoise";
    case Kind::kGaussianDropout: return "GaussianDropout";
    case Kind::kAlphaDropout: return "AlphaDropout";
  }
  return "GaussianNoise";
}

Result<std::vector<Shape>> NoiseLayer::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (kind_ == Kind::kSpatialDropout1D && in[0].size() != 2) {
    return Error("expects rank-2 input [steps, channels], got " + tensor::ShapeString(in[0]));
  }
  if (kind_ == Kind::kSpatialDropout2D && in[0].size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(in[0]));
  }
  return in;
}

std::vector<Var> NoiseLayer::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  if (!ctx.training || amount_ == 0.f) return inputs;
  EDL_CHECK(ctx.rng != nullptr) << class_name() << " in training needs an rng";
  std::mt19937_64& rng = *ctx.rng;
  const Var& x = inputs[0];
  const tensor::Device device = x.value().device();
  const float rate = amount_;
  switch (kind_) {
    case Kind::kSpatialDropout1D:
    case Kind::kSpatialDropout2D: {
      // One draw per sample and channel, broadcast over the steps / pixels.
      Shape mask_shape(x.shape().size(), 1);
      mask_shape.front() = x.shape().front();
      mask_shape.back() = x.shape().back();
      Tensor mask = Tensor::Empty(mask_shape);
      std::bernoulli_distribution keep(1.0 - rate);
      for (int64_t i = 0; i < mask.numel(); ++i)
        mask.f32()[i] = keep(rng) ? 1.f / (1.f - rate) : 0.f;
      return {fn::Mul(x, Var(mask.On(device)))};
    }
    case Kind::kGaussianNoise: {
      Tensor noise = Tensor::Empty(x.shape());
      std::normal_distribution<float> n(0.f, amount_);
      for (int64_t i = 0; i < noise.numel(); ++i) noise.f32()[i] = n(rng);
      return {fn::Add(x, Var(noise.On(device)))};
    }
    case Kind::kGaussianDropout: {
      Tensor noise = Tensor::Empty(x.shape());
      std::normal_distribution<float> n(1.f, std::sqrt(rate / (1.f - rate)));
      for (int64_t i = 0; i < noise.numel(); ++i) noise.f32()[i] = n(rng);
      return {fn::Mul(x, Var(noise.On(device)))};
    }
    case Kind::kAlphaDropout: {
      // y = a * (x * m + alpha_p * (1 - m)) + b, m ~ Bernoulli(1 - rate).
      constexpr double kAlphaP = -1.6732632423543772 * 1.0507009873554805;
      const double a = 1.0 / std::sqrt((1.0 - rate) * (1.0 + rate * kAlphaP * kAlphaP));
      const double b = -a * kAlphaP * rate;
      Tensor scale = Tensor::Empty(x.shape()), shift = Tensor::Empty(x.shape());
      std::bernoulli_distribution keep(1.0 - rate);
      for (int64_t i = 0; i < scale.numel(); ++i) {
        const bool k = keep(rng);
        scale.f32()[i] = static_cast<float>(k ? a : 0.0);
        shift.f32()[i] = static_cast<float>((k ? 0.0 : a * kAlphaP) + b);
      }
      return {fn::Add(fn::Mul(x, Var(scale.On(device))), Var(shift.On(device)))};
    }
  }
  return inputs;
}

nlohmann::json NoiseLayer::Config() const {
  nlohmann::json c = Layer::Config();
  c[kind_ == Kind::kGaussianNoise ? "stddev" : "rate"] = amount_;
  if (kind_ == Kind::kAlphaDropout) c["noise_shape"] = nullptr;
  return c;
}

}  // namespace edl::nn::layers
