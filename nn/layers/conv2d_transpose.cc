#include "nn/layers/conv2d_transpose.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Conv2DTranspose::FromConfig(const std::string& name,
                                                           const nlohmann::json& config) {
  std::unique_ptr<Conv2DTranspose> l(new Conv2DTranspose(name));
  ConfigReader r(config);
  l->filters_ = r.RequiredInt("filters");
  if (r.status().ok() && l->filters_ <= 0) r.Fail("filters", "must be positive");
  l->window_ = ReadConvWindow(r, 2);
  if (r.Get("output_padding") != nullptr) {
    l->output_padding_ = r.IntPair("output_padding", {0, 0});
    for (int i = 0; i < 2; ++i) {
      if (l->output_padding_[i] < 0 || l->output_padding_[i] >= l->window_.strides[i]) {
        r.Fail("output_padding", "must be at least 0 and smaller than strides (as Keras), got " +
                                     Describe(config["output_padding"]) + " with strides " +
                                     Describe(config.value("strides", nlohmann::json(1))));
      }
    }
  }
  EDL_ASSIGN_OR_RETURN(l->activation_, ParseActivation(r.String("activation", "linear")));
  l->use_bias_ = r.Bool("use_bias", true);
  l->kernel_bias_ = ReadKernelBiasConfig(r);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

tensor::Conv2DParams Conv2DTranspose::ParamsFor(int64_t oh, int64_t ow) const {
  return window_.ParamsFor({oh, ow, filters_});
}

Result<std::vector<Shape>> Conv2DTranspose::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  const Shape& s = in[0];
  if (s.size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(s));
  }
  if (in_channels_ >= 0 && s[2] != in_channels_) {
    return Error("was built for " + std::to_string(in_channels_) + " input channels, got " +
                 tensor::ShapeString(s));
  }
  Shape out = {0, 0, filters_};
  for (int i = 0; i < 2; ++i) {
    out[i] =
        tensor::TransposedConvOutputSize(s[i], window_.kernel_size[i], window_.strides[i],
                                         window_.dilation[i], window_.padding, output_padding_[i]);
  }
  // The convolution from the output back must give the input's size (with an
  // output_padding that does not, TensorFlow refuses the model as well).
  const std::array<int64_t, 4> pad = ParamsFor(out[0], out[1]).padding;
  for (int i = 0; i < 2; ++i) {
    const int64_t back =
        out[i] <= 0 ? 0
                    : tensor::ConvOutputSize(out[i], window_.kernel_size[i], window_.strides[i],
                                             window_.dilation[i], pad[2 * i], pad[2 * i + 1]);
    if (back != s[i]) {
      return Error("output_padding " + std::to_string(output_padding_[i]) + " gives an output of " +
                   std::to_string(out[i]) + " on axis " + std::to_string(i + 1) +
                   ", which the convolution maps back to " + std::to_string(back) + ", not " +
                   std::to_string(s[i]) + " (input " + tensor::ShapeString(s) + ")");
    }
  }
  return std::vector<Shape>{out};
}

Status Conv2DTranspose::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_channels_ = in[0][2];
  kernel_ = AddWeight(
      "kernel",
      MakeWeight(kernel_bias_.kernel_init,
                 {window_.kernel_size[0], window_.kernel_size[1], filters_, in_channels_}, rng),
      true, kernel_bias_.kernel_reg.Function());
  if (use_bias_) {
    bias_ = AddWeight("bias", MakeWeight(kernel_bias_.bias_init, {filters_}, rng), true,
                      kernel_bias_.bias_reg.Function());
  }
  return Status::Ok();
}

std::vector<Var> Conv2DTranspose::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  Shape in(x.shape().begin() + 1, x.shape().end());
  const Shape out = OutputShapes({in}).value()[0];
  Var y = fn::Conv2DTranspose(x, Use(*kernel_), {x.shape()[0], out[0], out[1], filters_},
                              ParamsFor(out[0], out[1]));
  if (bias_) y = fn::Add(y, fn::Reshape(Use(*bias_), {1, 1, 1, filters_}));
  return {ApplyActivation(activation_, y)};
}

nlohmann::json Conv2DTranspose::Config() const {
  nlohmann::json c = Layer::Config();
  c["filters"] = filters_;
  window_.ToConfig(c);
  if (output_padding_[0] >= 0) {
    c["output_padding"] = output_padding_;
  } else {
    c["output_padding"] = nullptr;
  }
  c["activation"] = ActivationName(activation_);
  c["use_bias"] = use_bias_;
  WriteKernelBiasConfig(kernel_bias_, c);
  return c;
}

}  // namespace edl::nn::layers
