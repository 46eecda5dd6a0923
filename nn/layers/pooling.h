// Pooling layers over NHWC inputs (channels_last only):
//   MaxPooling2D / AveragePooling2D (pool_size, strides default pool_size,
//   padding valid|same; average pooling excludes padding, as TensorFlow);
//   GlobalMaxPooling2D / GlobalAveragePooling2D (keepdims), and the 3-D
//   global poolings over [D, H, W, C];
// and their 1-D forms over [steps, channels] inputs (MaxPooling1D, ...;
// one size per field), pooled as a height-1 image.
#pragma once

#include <array>

#include "nn/layers/layer.h"
#include "tensor/ops.h"

namespace edl::nn::layers {

class Pooling2D : public Layer {
 public:
  // rank 1 or 2.
  static Result<std::unique_ptr<Layer>> FromConfig(tensor::PoolKind kind, int rank,
                                                   const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override {
    if (rank_ == 1) return kind_ == tensor::PoolKind::kMax ? "MaxPooling1D" : "AveragePooling1D";
    return kind_ == tensor::PoolKind::kMax ? "MaxPooling2D" : "AveragePooling2D";
  }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  Pooling2D(tensor::PoolKind kind, std::string name) : Layer(std::move(name)), kind_(kind) {}
  tensor::Pool2DParams ParamsFor(const Shape& in) const;

  tensor::PoolKind kind_;
  int rank_ = 2;  // 1: sizes in the second entries, input [1, steps, C]
  std::array<int64_t, 2> pool_size_{2, 2}, strides_{2, 2};
  tensor::Padding padding_ = tensor::Padding::kValid;
};

class GlobalPooling2D : public Layer {
 public:
  // rank 1, 2 or 3 (GlobalMaxPooling3D, ...: input [D, H, W, C]).
  static Result<std::unique_ptr<Layer>> FromConfig(tensor::PoolKind kind, int rank,
                                                   const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override {
    if (rank_ == 1) {
      return kind_ == tensor::PoolKind::kMax ? "GlobalMaxPooling1D" : "GlobalAveragePooling1D";
    }
    if (rank_ == 3) {
      return kind_ == tensor::PoolKind::kMax ? "GlobalMaxPooling3D" : "GlobalAveragePooling3D";
    }
    return kind_ == tensor::PoolKind::kMax ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D";
  }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;
  // GlobalAveragePooling1D averages over the real steps of a masked input.
  MaskSupport mask_support() const override {
    return rank_ == 1 && kind_ == tensor::PoolKind::kAvg ? MaskSupport::kUse : MaskSupport::kNone;
  }
  bool OutputMasked(const std::vector<bool>&) const override { return false; }
  std::vector<Var> CallWithMasks(const std::vector<Var>& inputs, const std::vector<Tensor>& masks,
                                 const CallContext& ctx, Tensor* mask) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  GlobalPooling2D(tensor::PoolKind kind, std::string name) : Layer(std::move(name)), kind_(kind) {}
  tensor::PoolKind kind_;
  int rank_ = 2;
  bool keepdims_ = false;
};

}  // namespace edl::nn::layers
