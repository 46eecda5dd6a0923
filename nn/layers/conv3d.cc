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
    out[a] =
        tensor::ConvOutputSize(in[a], size[a], strides[a], dilation[a], pad[2 * a], pad[2 * a + 1]);
    if (out[a] <= 0) {
      return InvalidArgument("is smaller than the " + std::to_string(size[0]) + "x" +
                             std::to_string(size[1]) + "x" + std::to_string(size[2]) + " " + what);
    }
  }
  return out;
}

namespace {

Status ReadConv3D(ConfigReader& r, Conv3DConfig* f) {
  f->filters = r.RequiredInt("filters");
  if (r.status().ok() && f->filters <= 0) r.Fail("filters", "must be positive");
  if (r.Get("kernel_size") == nullptr) r.Fail("kernel_size", "is required");
  Window3D& w = f->window;
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
  w.padding =
      r.String("padding", "valid") == "same" ? tensor::Padding::kSame : tensor::Padding::kValid;
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_ASSIGN_OR_RETURN(f->activation, ParseActivation(r.String("activation", "linear")));
  f->use_bias = r.Bool("use_bias", true);
  f->kernel_bias = ReadKernelBiasConfig(r);
  return r.status();
}

}  // namespace

void Conv3DBase::MakeWeights(const Shape& kernel, std::mt19937_64& rng) {
  kernel_ = AddWeight("kernel", MakeWeight(cfg_.kernel_bias.kernel_init, kernel, rng), true,
                      cfg_.kernel_bias.kernel_reg.Function());
  if (cfg_.use_bias) {
    bias_ = AddWeight("bias", MakeWeight(cfg_.kernel_bias.bias_init, {cfg_.filters}, rng), true,
                      cfg_.kernel_bias.bias_reg.Function());
  }
}

Status Conv3DBase::CheckInput(const std::vector<Shape>& in) const {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  const Shape& s = in[0];
  if (s.size() != 4) {
    return Error("expects rank-4 input [D, H, W, C], got " + tensor::ShapeString(s));
  }
  if (in_channels_ >= 0 && s[3] != in_channels_) {
    return Error("was built for " + std::to_string(in_channels_) + " input channels, got " +
                 tensor::ShapeString(s));
  }
  return Status::Ok();
}

void Conv3DBase::WriteConfig(nlohmann::json& c) const {
  c["filters"] = cfg_.filters;
  c["kernel_size"] = cfg_.window.size;
  c["strides"] = cfg_.window.strides;
  c["dilation_rate"] = cfg_.window.dilation;
  c["padding"] = cfg_.window.padding == tensor::Padding::kSame ? "same" : "valid";
  c["data_format"] = "channels_last";
  c["activation"] = ActivationName(cfg_.activation);
  c["use_bias"] = cfg_.use_bias;
  WriteKernelBiasConfig(cfg_.kernel_bias, c);
}

Result<std::unique_ptr<Layer>> Conv3D::FromConfig(const std::string& name,
                                                  const nlohmann::json& config) {
  std::unique_ptr<Conv3D> l(new Conv3D(name));
  ConfigReader r(config);
  EDL_RETURN_IF_ERROR(ReadConv3D(r, &l->cfg_));
  l->groups_ = r.Int("groups", 1);
  if (l->groups_ < 1 || l->cfg_.filters % l->groups_ != 0) {
    r.Fail("groups", "must be a positive divisor of filters (" + std::to_string(l->cfg_.filters) +
                         "), got " + std::to_string(l->groups_));
  }
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Conv3D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(CheckInput(in));
  const Shape& s = in[0];
  if (s[3] % groups_ != 0) {
    return Error(std::to_string(s[3]) + " input channels do not split into " +
                 std::to_string(groups_) + " groups");
  }
  auto size = cfg_.window.OutputSize(s, "kernel");
  if (!size.ok()) return Error("input " + tensor::ShapeString(s) + " " + size.status().message());
  return std::vector<Shape>{{(*size)[0], (*size)[1], (*size)[2], cfg_.filters}};
}

Status Conv3D::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_channels_ = in[0].back();
  const Shape kernel{cfg_.window.size[0], cfg_.window.size[1], cfg_.window.size[2],
                     in_channels_ / groups_, cfg_.filters};
  MakeWeights(kernel, rng);
  return Status::Ok();
}

std::vector<Var> Conv3D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  const Shape s(x.shape().begin() + 1, x.shape().end());
  fn::Conv3DParams p;
  p.strides = cfg_.window.strides;
  p.dilations = cfg_.window.dilation;
  p.padding = cfg_.window.PaddingFor(s);
  p.groups = groups_;
  Var y = fn::Conv3D(x, Use(*kernel_), bias_ ? Use(*bias_) : Var(), p);
  return {ApplyActivation(cfg_.activation, y)};
}

nlohmann::json Conv3D::Config() const {
  nlohmann::json c = Layer::Config();
  WriteConfig(c);
  if (groups_ != 1) c["groups"] = groups_;  // (TF.js has no groups)
  return c;
}

Result<std::unique_ptr<Layer>> Conv3DTranspose::FromConfig(const std::string& name,
                                                           const nlohmann::json& config) {
  std::unique_ptr<Conv3DTranspose> l(new Conv3DTranspose(name));
  ConfigReader r(config);
  EDL_RETURN_IF_ERROR(ReadConv3D(r, &l->cfg_));
  if (r.Get("output_padding") != nullptr) {
    l->output_padding_ = r.IntTriple("output_padding", {0, 0, 0});
    for (int a = 0; a < 3; ++a) {
      if (l->output_padding_[a] < 0 || l->output_padding_[a] >= l->cfg_.window.strides[a]) {
        r.Fail("output_padding", "must be at least 0 and smaller than strides (as Keras), got " +
                                     Describe(config["output_padding"]) + " with strides " +
                                     Describe(config.value("strides", nlohmann::json(1))));
      }
    }
  }
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Conv3DTranspose::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(CheckInput(in));
  const Shape& s = in[0];
  const Window3D& w = cfg_.window;
  Shape out = {0, 0, 0, cfg_.filters};
  for (int a = 0; a < 3; ++a) {
    out[a] = tensor::TransposedConvOutputSize(s[a], w.size[a], w.strides[a], w.dilation[a],
                                              w.padding, output_padding_[a]);
  }
  // The convolution from the output back must give the input's size (with an
  // output_padding that does not, TensorFlow refuses the model as well).
  const std::array<int64_t, 6> pad = w.PaddingFor(out);
  for (int a = 0; a < 3; ++a) {
    const int64_t back = out[a] <= 0
                             ? 0
                             : tensor::ConvOutputSize(out[a], w.size[a], w.strides[a],
                                                      w.dilation[a], pad[2 * a], pad[2 * a + 1]);
    if (back != s[a]) {
      return Error("output_padding " + std::to_string(output_padding_[a]) + " gives an output of " +
                   std::to_string(out[a]) + " on axis " + std::to_string(a + 1) +
                   ", which the convolution maps back to " + std::to_string(back) + ", not " +
                   std::to_string(s[a]) + " (input " + tensor::ShapeString(s) + ")");
    }
  }
  return std::vector<Shape>{out};
}

Status Conv3DTranspose::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_channels_ = in[0].back();
  const Shape kernel{cfg_.window.size[0], cfg_.window.size[1], cfg_.window.size[2], cfg_.filters,
                     in_channels_};
  MakeWeights(kernel, rng);
  return Status::Ok();
}

std::vector<Var> Conv3DTranspose::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  const Shape in(x.shape().begin() + 1, x.shape().end());
  const Shape out = OutputShapes({in}).value()[0];
  fn::Conv3DParams p;
  p.strides = cfg_.window.strides;
  p.dilations = cfg_.window.dilation;
  p.padding = cfg_.window.PaddingFor(out);  // of the convolution from the output back to x
  Var y = fn::Conv3DTranspose(x, Use(*kernel_),
                              {x.shape()[0], out[0], out[1], out[2], cfg_.filters}, p);
  if (bias_) y = fn::Add(y, fn::Reshape(Use(*bias_), {1, 1, 1, 1, cfg_.filters}));
  return {ApplyActivation(cfg_.activation, y)};
}

nlohmann::json Conv3DTranspose::Config() const {
  nlohmann::json c = Layer::Config();
  WriteConfig(c);
  if (output_padding_[0] >= 0) {
    c["output_padding"] = output_padding_;
  } else {
    c["output_padding"] = nullptr;
  }
  return c;
}

}  // namespace edl::nn::layers
