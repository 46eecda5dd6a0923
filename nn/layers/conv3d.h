// Conv3D: 3-D convolution over NDHWC inputs [D, H, W, C] (Keras Conv3D,
// channels_last only). Weights: kernel [kd, kh, kw, in_channels / groups,
// filters], bias [filters]. "same" padding puts the extra plane/row/column
// at the back/bottom/right, as TensorFlow. Runs as 2-D convolutions, one per
// depth tap (nn/functional_3d.h).
//
// Conv3DTranspose: its transpose (Keras Conv3DTranspose): kernel [kd, kh, kw,
// filters, in_channels] (as Keras), bias [filters]; output size per axis by
// Keras' rule (tensor::TransposedConvOutputSize, as Conv2DTranspose),
// output_padding included.
#pragma once

#include <array>

#include "nn/functional_3d.h"
#include "nn/layers/activations.h"
#include "nn/layers/kernel_bias_config.h"
#include "nn/layers/layer.h"

namespace edl::nn::layers {

// The 3-D window fields of Conv3D and the 3-D poolings.
struct Window3D {
  std::array<int64_t, 3> size{1, 1, 1}, strides{1, 1, 1}, dilation{1, 1, 1};
  tensor::Padding padding = tensor::Padding::kValid;

  // Explicit padding for an input [D, H, W, ...].
  std::array<int64_t, 6> PaddingFor(const Shape& in) const;
  // [OD, OH, OW]; an error naming the window when `in` is too small.
  Result<std::array<int64_t, 3>> OutputSize(const Shape& in, const char* what) const;
};

// The config fields Conv3D and Conv3DTranspose share.
struct Conv3DConfig {
  int64_t filters = 0;
  Window3D window;
  ActivationKind activation = ActivationKind::kLinear;
  bool use_bias = true;
  KernelBiasConfig kernel_bias;
};

// What the two 3-D convolutions share: their config, kernel and bias.
class Conv3DBase : public Layer {
 protected:
  using Layer::Layer;
  // Fails unless `in` is one input [D, H, W, C] (once built, with the
  // channels the weights were built for).
  Status CheckInput(const std::vector<Shape>& in) const;
  // Adds the kernel (shape `kernel`) and the bias.
  void MakeWeights(const Shape& kernel, std::mt19937_64& rng);
  // The shared fields into a Keras config.
  void WriteConfig(nlohmann::json& c) const;

  Conv3DConfig cfg_;
  int64_t in_channels_ = -1;
  Parameter* kernel_ = nullptr;
  Parameter* bias_ = nullptr;
};

class Conv3D : public Conv3DBase {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Conv3D"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Conv3DBase::Conv3DBase;
  int64_t groups_ = 1;
};

class Conv3DTranspose : public Conv3DBase {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Conv3DTranspose"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Conv3DBase::Conv3DBase;

  std::array<int64_t, 3> output_padding_{-1, -1, -1};  // -1: none (null)
};

}  // namespace edl::nn::layers
