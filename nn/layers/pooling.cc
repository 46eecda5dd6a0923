#include "nn/layers/pooling.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Pooling2D::FromConfig(tensor::PoolKind kind,
                                                     const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<Pooling2D> l(new Pooling2D(kind, name));
  ConfigReader r(config);
  l->pool_size_ = r.IntPair("pool_size", {2, 2});
  l->strides_ = r.IntPair("strides", l->pool_size_);
  for (int64_t v : {l->pool_size_[0], l->pool_size_[1]}) {
    if (v <= 0) r.Fail("pool_size", "must be positive");
  }
  for (int64_t v : {l->strides_[0], l->strides_[1]}) {
    if (v <= 0) r.Fail("strides", "must be positive");
  }
  r.ExpectOneOf("padding", {"valid", "same"});
  l->padding_ = r.String("padding", "valid") == "same" ? tensor::Padding::kSame
                                                       : tensor::Padding::kValid;
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

tensor::Pool2DParams Pooling2D::ParamsFor(const Shape& in) const {
  tensor::Pool2DParams p;
  p.kernel = pool_size_;
  p.strides = strides_;
  p.padding = tensor::ComputePadding(padding_, in[0], in[1], pool_size_[0],
                                     pool_size_[1], strides_, {1, 1});
  return p;
}

Result<std::vector<Shape>> Pooling2D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  const Shape& s = in[0];
  if (s.size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(s));
  }
  tensor::Pool2DParams p = ParamsFor(s);
  int64_t oh = tensor::ConvOutputSize(s[0], pool_size_[0], strides_[0], 1,
                                      p.padding[0], p.padding[1]);
  int64_t ow = tensor::ConvOutputSize(s[1], pool_size_[1], strides_[1], 1,
                                      p.padding[2], p.padding[3]);
  if (oh <= 0 || ow <= 0) {
    return Error("input " + tensor::ShapeString(s) +
                 " is smaller than the pool_size");
  }
  return std::vector<Shape>{{oh, ow, s[2]}};
}

std::vector<Var> Pooling2D::Call(const std::vector<Var>& inputs,
                                 const CallContext& ctx) {
  const Var& x = inputs[0];
  Shape s(x.shape().begin() + 1, x.shape().end());
  return {fn::Pool2D(kind_, x, ParamsFor(s))};
}

nlohmann::json Pooling2D::Config() const {
  nlohmann::json c = Layer::Config();
  c["pool_size"] = pool_size_;
  c["strides"] = strides_;
  c["padding"] = padding_ == tensor::Padding::kSame ? "same" : "valid";
  c["data_format"] = "channels_last";
  return c;
}

Result<std::unique_ptr<Layer>> GlobalPooling2D::FromConfig(
    tensor::PoolKind kind, const std::string& name, const nlohmann::json& config) {
  std::unique_ptr<GlobalPooling2D> l(new GlobalPooling2D(kind, name));
  ConfigReader r(config);
  r.ExpectOneOf("data_format", {"channels_last"});
  l->keepdims_ = r.Bool("keepdims", false);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> GlobalPooling2D::OutputShapes(
    const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  const Shape& s = in[0];
  if (s.size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(s));
  }
  if (keepdims_) return std::vector<Shape>{{1, 1, s[2]}};
  return std::vector<Shape>{{s[2]}};
}

std::vector<Var> GlobalPooling2D::Call(const std::vector<Var>& inputs,
                                       const CallContext& ctx) {
  tensor::Reduce r = kind_ == tensor::PoolKind::kMax ? tensor::Reduce::kMax
                                                     : tensor::Reduce::kMean;
  return {fn::ReduceOp(r, inputs[0], {1, 2}, keepdims_)};
}

nlohmann::json GlobalPooling2D::Config() const {
  nlohmann::json c = Layer::Config();
  c["data_format"] = "channels_last";
  c["keepdims"] = keepdims_;
  return c;
}

}  // namespace edl::nn::layers
