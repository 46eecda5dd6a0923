// MaxPooling3D / AveragePooling3D over NDHWC inputs [D, H, W, C]
// (channels_last only): pool_size (default 2 on each axis), strides
// (default pool_size), padding valid|same; average pooling excludes padding,
// as TensorFlow. Runs as 2-D poolings (nn/functional_3d.h). The global 3-D
// poolings are GlobalPooling2D of rank 3 (nn/layers/pooling.h).
#pragma once

#include "nn/layers/conv3d.h"

namespace edl::nn::layers {

class Pooling3D : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(tensor::PoolKind kind, const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override {
    return kind_ == tensor::PoolKind::kMax ? "MaxPooling3D" : "AveragePooling3D";
  }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  Pooling3D(tensor::PoolKind kind, std::string name) : Layer(std::move(name)), kind_(kind) {}

  tensor::PoolKind kind_;
  Window3D window_;  // size = pool_size; dilation stays 1
};

}  // namespace edl::nn::layers
