#include "nn/layers/conv3d.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

std::array<int64_t, 6> Window3D::PaddingFor(const Shape& in) const {
  return fn::ComputePadding3D(padding, {in[0], in[1], in[2]}, size, strides, dilation);
}

Result<std::array<int64_t, 3>> Window3D::OutputSize(const Shape& in, const char* what) const {
  const std::array<int64_t, 6> pad = PaddingFor(in);
  std::array<int64_t, 3> out{};
  for (int a = 0; a < 3; ++a) {
    out[a] = tensor::ConvOutputSize(in[a], size[a], strides[a], dilation[a], pad[2 * a],
                                    pad[2 * a + 1]);
    if (out[a] <= 0) {
      return InvalidArgument("is smaller than the " + std::to_string(size[0]) + "x" +
                             std::to_string(size[1]) + "x" + std::to_string(size[2]) + " " +
                             what);
    }
  }
  return out;
}

Result<std::unique_ptr<Layer>> Conv3D::FromConfig(const std::string& name,
                                                  const nlohmann::json& config) {
  std::unique_ptr<Conv3D> l(new Conv3D(name));
  ConfigReader r(config);
  l->filters_ = r.RequiredInt("filters");
  if (r.status().ok() && l->filters_ <= 0) r.Fail("filters", "must be positive");
  if (r.Get("kernel_size") == nullptr) r.Fail("kernel_size", "is required");
  Window3D& w = l->window_;
  w.size = r.IntTriple("kernel_size", {1, 1, 1});
  w.strides = r.IntTriple("strides", {1, 1, 1});
  w.dilation = r.IntTriple("dilation_rate", {1, 1, 1});
  for (auto [field, v] : {std::pair<const char*, std::array<int64_t, 3>>{"kernel_size", w.size},
                          {"strides", w.strides},
                          {"dilation_rate", w.dilation}}) {
    if (v[0] <= 0 || v[1] <= 0 || v[2] <= 0) r.Fail(field, "must be positive");
  }
  const bool strided = w.strides[0] > 1 || w.strides[1] > 1 || w.strides[2] > 1;
  const bool dilated = w.dilation[0] > 1 || w.dilation[1] > 1 || w.dilation[2] > 1;
  if (strided && dilated) {
    r.Fail("strides", "> 1 cannot be combined with dilation_rate > 1 (as Keras)");
  }
  r.ExpectOneOf("padding", {"valid", "same"});
  w.padding = r.String("padding", "valid") == "same" ? tensor::Padding::kSame
                                                     : tensor::Padding::kValid;
  r.ExpectOneOf("data_format", {"channels_last"});
  l->groups_ = r.Int("groups", 1);
  if (r.status().ok() && (l->groups_ < 1 || l->filters_ % l->groups_ != 0)) {
    r.Fail("groups", "must be a positive divisor of filters (" + std::to_string(l->filters_) +
                         "), got " + std::to_string(l->groups_));
  }
  EDL_ASSIGN_OR_RETURN(l->activation_, ParseActivation(r.String("activation", "linear")));
  l->use_bias_ = r.Bool("use_bias", true);
  l->kernel_init_ = ReadInitializer(r, "kernel_initializer", "GlorotUniform");
  l->bias_init_ = ReadInitializer(r, "bias_initializer", "Zeros");
  l->kernel_reg_ = ReadRegularizer(r, "kernel_regularizer");
  l->bias_reg_ = ReadRegularizer(r, "bias_regularizer");
  r.ExpectNull("activity_regularizer");
  r.ExpectNull("kernel_constraint");
  r.ExpectNull("bias_constraint");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Conv3D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  const Shape& s = in[0];
  if (s.size() != 4) {
    return Error("expects rank-4 input [D, H, W, C], got " + tensor::ShapeString(s));
  }
  if (in_channels_ >= 0 && s[3] != in_channels_) {
    return Error("was built for " + std::to_string(in_channels_) +
                 " input channels, got " + tensor::ShapeString(s));
  }
  if (s[3] % groups_ != 0) {
    return Error(std::to_string(s[3]) + " input channels do not split into " +
                 std::to_string(groups_) + " groups");
  }
  auto size = window_.OutputSize(s, "kernel");
  if (!size.ok()) return Error("input " + tensor::ShapeString(s) + " " + size.status().message());
  return std::vector<Shape>{{(*size)[0], (*size)[1], (*size)[2], filters_}};
}

Status Conv3D::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_channels_ = in[0].back();
  const Shape kernel{window_.size[0], window_.size[1], window_.size[2], in_channels_ / groups_,
                     filters_};
  kernel_ = AddWeight("kernel", MakeWeight(kernel_init_, kernel, rng), true,
                      kernel_reg_.Function());
  if (use_bias_) {
    bias_ = AddWeight("bias", MakeWeight(bias_init_, {filters_}, rng), true,
                      bias_reg_.Function());
  }
  return Status::Ok();
}

std::vector<Var> Conv3D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  const Shape s(x.shape().begin() + 1, x.shape().end());
  fn::Conv3DParams p;
  p.strides = window_.strides;
  p.dilations = window_.dilation;
  p.padding = window_.PaddingFor(s);
  p.groups = groups_;
  Var y = fn::Conv3D(x, Use(*kernel_), bias_ ? Use(*bias_) : Var(), p);
  return {ApplyActivation(activation_, y)};
}

nlohmann::json Conv3D::Config() const {
  nlohmann::json c = Layer::Config();
  c["filters"] = filters_;
  c["kernel_size"] = window_.size;
  c["strides"] = window_.strides;
  c["dilation_rate"] = window_.dilation;
  c["padding"] = window_.padding == tensor::Padding::kSame ? "same" : "valid";
  c["data_format"] = "channels_last";
  if (groups_ != 1) c["groups"] = groups_;  // (TF.js has no groups)
  c["activation"] = ActivationName(activation_);
  c["use_bias"] = use_bias_;
  c["kernel_initializer"] = kernel_init_.json;
  c["bias_initializer"] = bias_init_.json;
  c["kernel_regularizer"] = kernel_reg_.json;
  c["bias_regularizer"] = bias_reg_.json;
  c["activity_regularizer"] = nullptr;
  c["kernel_constraint"] = nullptr;
  c["bias_constraint"] = nullptr;
  return c;
}

}  // namespace edl::nn::layers
