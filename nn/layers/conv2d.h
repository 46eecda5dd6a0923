// Conv2D: 2-D convolution over NHWC inputs (Keras Conv2D, channels_last
// only). Weights: kernel [kh, kw, in_channels / groups, filters], bias
// [filters].
// "same" padding puts the extra row/column at the bottom/right, as
// TensorFlow. Conv1D is the same over [steps, channels] inputs (run as a
// convolution of height 1): kernel [k, in_channels, filters], and also
// "causal" padding (k - 1 dilated steps on the left only).
#pragma once

#include <array>

#include "nn/layers/activations.h"
#include "nn/layers/kernel_bias_config.h"
#include "nn/layers/layer.h"
#include "tensor/ops.h"

namespace edl::nn::layers {

// The window fields every convolution reads: kernel_size (required),
// strides, dilation_rate, padding, data_format (channels_last only). rank 1
// (Conv1D) keeps one size per field as {1, size} and allows "causal".
struct ConvWindow {
  std::array<int64_t, 2> kernel_size{1, 1}, strides{1, 1}, dilation{1, 1};
  tensor::Padding padding = tensor::Padding::kValid;
  bool causal = false;

  // The convolution over `in` [H, W, C].
  tensor::Conv2DParams ParamsFor(const Shape& in) const;
  // The output [OH, OW]; an error naming the kernel when `in` is too small.
  Result<std::array<int64_t, 2>> OutputSize(const Shape& in) const;
  // Writes the fields back into a Keras config (2-D form).
  void ToConfig(nlohmann::json& c) const;
};
ConvWindow ReadConvWindow(ConfigReader& r, int rank);

class Conv2D : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  static Result<std::unique_ptr<Layer>> FromConfig1D(const std::string& name,
                                                     const nlohmann::json& config);
  const char* class_name() const override { return rank_ == 1 ? "Conv1D" : "Conv2D"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  static Result<std::unique_ptr<Layer>> Read(int rank, const std::string& name,
                                             const nlohmann::json& config);
  // `in`: [H, W, C] (Conv1D: [1, steps, C]).
  tensor::Conv2DParams ParamsFor(const Shape& in) const;

  int rank_ = 2;  // 1: Conv1D, its sizes in the second entries of window_
  int64_t filters_ = 0;
  int64_t groups_ = 1;
  ConvWindow window_;
  ActivationKind activation_ = ActivationKind::kLinear;
  bool use_bias_ = true;
  KernelBiasConfig kernel_bias_;
  int64_t in_channels_ = -1;
  Parameter* kernel_ = nullptr;
  Parameter* bias_ = nullptr;
};

}  // namespace edl::nn::layers
