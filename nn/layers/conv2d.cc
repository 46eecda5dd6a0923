#include "nn/layers/conv2d.h"

#include "nn/functional.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Conv2D::FromConfig(const std::string& name,
                                                  const nlohmann::json& config) {
  return Read(2, name, config);
}

Result<std::unique_ptr<Layer>> Conv2D::FromConfig1D(const std::string& name,
                                                    const nlohmann::json& config) {
  return Read(1, name, config);
}

ConvWindow ReadConvWindow(ConfigReader& r, int rank) {
  ConvWindow w;
  if (r.Get("kernel_size") == nullptr) r.Fail("kernel_size", "is required");
  // Conv1D: one size per field, kept as {1, size}.
  auto sizes = [&](const char* field) {
    if (rank == 2) return r.IntPair(field, {1, 1});
    const nlohmann::json* v = r.Get(field);
    if (v != nullptr && v->is_array() && v->size() != 1) {
      r.Fail(field, "must be 1 integer for Conv1D, got " + v->dump());
    }
    return std::array<int64_t, 2>{1, r.IntPair(field, {1, 1})[1]};
  };
  w.kernel_size = sizes("kernel_size");
  w.strides = sizes("strides");
  w.dilation = sizes("dilation_rate");
  for (auto [field, pair] :
       {std::pair<const char*, std::array<int64_t, 2>>{"kernel_size", w.kernel_size},
        {"strides", w.strides},
        {"dilation_rate", w.dilation}}) {
    if (pair[0] <= 0 || pair[1] <= 0) r.Fail(field, "must be positive");
  }
  if ((w.strides[0] > 1 || w.strides[1] > 1) && (w.dilation[0] > 1 || w.dilation[1] > 1)) {
    r.Fail("strides", "> 1 cannot be combined with dilation_rate > 1 (as Keras)");
  }
  if (rank == 1) {
    r.ExpectOneOf("padding", {"valid", "same", "causal"});
  } else {
    r.ExpectOneOf("padding", {"valid", "same"});
  }
  const std::string padding = r.String("padding", "valid");
  w.padding = padding == "same" ? tensor::Padding::kSame : tensor::Padding::kValid;
  w.causal = padding == "causal";
  r.ExpectOneOf("data_format", {"channels_last"});
  return w;
}

tensor::Conv2DParams ConvWindow::ParamsFor(const Shape& in) const {
  tensor::Conv2DParams p;
  p.strides = strides;
  p.dilations = dilation;
  p.padding = tensor::ComputePadding(padding, in[0], in[1], kernel_size[0], kernel_size[1], strides,
                                     dilation);
  if (causal) p.padding = {0, 0, (kernel_size[1] - 1) * dilation[1], 0};
  return p;
}

Result<std::array<int64_t, 2>> ConvWindow::OutputSize(const Shape& in) const {
  const tensor::Conv2DParams p = ParamsFor(in);
  const int64_t oh = tensor::ConvOutputSize(in[0], kernel_size[0], strides[0], dilation[0],
                                            p.padding[0], p.padding[1]);
  const int64_t ow = tensor::ConvOutputSize(in[1], kernel_size[1], strides[1], dilation[1],
                                            p.padding[2], p.padding[3]);
  if (oh <= 0 || ow <= 0) {
    return InvalidArgument("is smaller than the " + std::to_string(kernel_size[0]) + "x" +
                           std::to_string(kernel_size[1]) + " kernel");
  }
  return std::array<int64_t, 2>{oh, ow};
}

void ConvWindow::ToConfig(nlohmann::json& c) const {
  c["kernel_size"] = kernel_size;
  c["strides"] = strides;
  c["dilation_rate"] = dilation;
  c["padding"] = causal ? "causal" : padding == tensor::Padding::kSame ? "same" : "valid";
  c["data_format"] = "channels_last";
}

Result<std::unique_ptr<Layer>> Conv2D::Read(int rank, const std::string& name,
                                            const nlohmann::json& config) {
  std::unique_ptr<Conv2D> l(new Conv2D(name));
  l->rank_ = rank;
  ConfigReader r(config);
  l->filters_ = r.RequiredInt("filters");
  if (r.status().ok() && l->filters_ <= 0) r.Fail("filters", "must be positive");
  l->window_ = ReadConvWindow(r, rank);
  l->groups_ = r.Int("groups", 1);
  if (r.status().ok() && (l->groups_ < 1 || l->filters_ % l->groups_ != 0)) {
    r.Fail("groups", "must be a positive divisor of filters (" + std::to_string(l->filters_) +
                         "), got " + std::to_string(l->groups_));
  }
  EDL_ASSIGN_OR_RETURN(l->activation_, ParseActivation(r.String("activation", "linear")));
  l->use_bias_ = r.Bool("use_bias", true);
  l->kernel_bias_ = ReadKernelBiasConfig(r);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

tensor::Conv2DParams Conv2D::ParamsFor(const Shape& in) const {
  tensor::Conv2DParams p = window_.ParamsFor(in);
  p.groups = groups_;
  return p;
}

Result<std::vector<Shape>> Conv2D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (rank_ == 1 && in[0].size() != 2) {
    return Error("expects rank-2 input [steps, channels], got " + tensor::ShapeString(in[0]));
  }
  const Shape s = rank_ == 1 ? Shape{1, in[0][0], in[0][1]} : in[0];
  if (s.size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(s));
  }
  if (in_channels_ >= 0 && s[2] != in_channels_) {
    return Error("was built for " + std::to_string(in_channels_) + " input channels, got " +
                 tensor::ShapeString(s));
  }
  if (s[2] % groups_ != 0) {
    return Error(std::to_string(s[2]) + " input channels do not split into " +
                 std::to_string(groups_) + " groups");
  }
  auto size = window_.OutputSize(s);
  if (!size.ok()) {
    if (rank_ == 1) {
      return Error("input " + tensor::ShapeString(in[0]) + " is smaller than the " +
                   std::to_string(window_.kernel_size[1]) + "-step kernel");
    }
    return Error("input " + tensor::ShapeString(in[0]) + " " + size.status().message());
  }
  if (rank_ == 1) return std::vector<Shape>{{(*size)[1], filters_}};
  return std::vector<Shape>{{(*size)[0], (*size)[1], filters_}};
}

Status Conv2D::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_channels_ = in[0].back();
  const int64_t per_group = in_channels_ / groups_;
  const Shape kernel =
      rank_ == 1 ? Shape{window_.kernel_size[1], per_group, filters_}
                 : Shape{window_.kernel_size[0], window_.kernel_size[1], per_group, filters_};
  kernel_ = AddWeight("kernel", MakeWeight(kernel_bias_.kernel_init, kernel, rng), true,
                      kernel_bias_.kernel_reg.Function());
  if (use_bias_) {
    bias_ = AddWeight("bias", MakeWeight(kernel_bias_.bias_init, {filters_}, rng), true,
                      kernel_bias_.bias_reg.Function());
  }
  return Status::Ok();
}

std::vector<Var> Conv2D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  if (rank_ == 1) {
    // [B, steps, C] as [B, 1, steps, C]; kernel [k, C, F] as [1, k, C, F].
    const int64_t batch = x.shape()[0], steps = x.shape()[1];
    Var x2 = fn::Reshape(x, {batch, 1, steps, in_channels_});
    Var k2 =
        fn::Reshape(Use(*kernel_), {1, window_.kernel_size[1], in_channels_ / groups_, filters_});
    Var y = fn::Conv2D(x2, k2, bias_ ? Use(*bias_) : Var(), ParamsFor({1, steps, in_channels_}));
    y = fn::Reshape(y, {batch, y.shape()[2], filters_});
    return {ApplyActivation(activation_, y)};
  }
  Shape s(x.shape().begin() + 1, x.shape().end());
  Var y = fn::Conv2D(x, Use(*kernel_), bias_ ? Use(*bias_) : Var(), ParamsFor(s));
  return {ApplyActivation(activation_, y)};
}

nlohmann::json Conv2D::Config() const {
  nlohmann::json c = Layer::Config();
  c["filters"] = filters_;
  window_.ToConfig(c);
  if (rank_ == 1) {
    c["kernel_size"] = {window_.kernel_size[1]};
    c["strides"] = {window_.strides[1]};
    c["dilation_rate"] = {window_.dilation[1]};
  }
  if (groups_ != 1) c["groups"] = groups_;  // (TF.js has no groups)
  c["activation"] = ActivationName(activation_);
  c["use_bias"] = use_bias_;
  WriteKernelBiasConfig(kernel_bias_, c);
  return c;
}

}  // namespace edl::nn::layers
