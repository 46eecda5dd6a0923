#include "nn/layers/pooling.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Pooling2D::FromConfig(tensor::PoolKind kind, int rank,
                                                     const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<Pooling2D> l(new Pooling2D(kind, name));
  l->rank_ = rank;
  ConfigReader r(config);
  if (rank == 1) {
    for (const char* field : {"pool_size", "strides"}) {
      const nlohmann::json* v = r.Get(field);
      if (v != nullptr && v->is_array() && v->size() != 1) {
        r.Fail(field, "must be 1 integer for a 1-D pooling, got " + v->dump());
      }
    }
    l->pool_size_ = {1, r.IntPair("pool_size", {2, 2})[1]};
    l->strides_ = {1, r.IntPair("strides", l->pool_size_)[1]};
  } else {
    l->pool_size_ = r.IntPair("pool_size", {2, 2});
    l->strides_ = r.IntPair("strides", l->pool_size_);
  }
  for (int64_t v : {l->pool_size_[0], l->pool_size_[1]}) {
    if (v <= 0) r.Fail("pool_size", "must be positive");
  }
  for (int64_t v : {l->strides_[0], l->strides_[1]}) {
    if (v <= 0) r.Fail("strides", "must be positive");
  }
  r.ExpectOneOf("padding", {"valid", "same"});
  l->padding_ =
      r.String("padding", "valid") == "same" ? tensor::Padding::kSame : tensor::Padding::kValid;
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

tensor::Pool2DParams Pooling2D::ParamsFor(const Shape& in) const {
  tensor::Pool2DParams p;
  p.kernel = pool_size_;
  p.strides = strides_;
  p.padding = tensor::ComputePadding(padding_, in[0], in[1], pool_size_[0], pool_size_[1], strides_,
                                     {1, 1});
  return p;
}

Result<std::vector<Shape>> Pooling2D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (rank_ == 1 && in[0].size() != 2) {
    return Error("expects rank-2 input [steps, channels], got " + tensor::ShapeString(in[0]));
  }
  const Shape s = rank_ == 1 ? Shape{1, in[0][0], in[0][1]} : in[0];
  if (s.size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(s));
  }
  tensor::Pool2DParams p = ParamsFor(s);
  int64_t oh =
      tensor::ConvOutputSize(s[0], pool_size_[0], strides_[0], 1, p.padding[0], p.padding[1]);
  int64_t ow =
      tensor::ConvOutputSize(s[1], pool_size_[1], strides_[1], 1, p.padding[2], p.padding[3]);
  if (oh <= 0 || ow <= 0) {
    return Error("input " + tensor::ShapeString(in[0]) + " is smaller than the pool_size");
  }
  if (rank_ == 1) return std::vector<Shape>{{ow, s[2]}};
  return std::vector<Shape>{{oh, ow, s[2]}};
}

std::vector<Var> Pooling2D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  if (rank_ == 1) {
    const int64_t batch = x.shape()[0], steps = x.shape()[1], channels = x.shape()[2];
    Var y = fn::Pool2D(kind_, fn::Reshape(x, {batch, 1, steps, channels}),
                       ParamsFor({1, steps, channels}));
    return {fn::Reshape(y, {batch, y.shape()[2], channels})};
  }
  Shape s(x.shape().begin() + 1, x.shape().end());
  return {fn::Pool2D(kind_, x, ParamsFor(s))};
}

nlohmann::json Pooling2D::Config() const {
  nlohmann::json c = Layer::Config();
  if (rank_ == 1) {
    c["pool_size"] = {pool_size_[1]};
    c["strides"] = {strides_[1]};
  } else {
    c["pool_size"] = pool_size_;
    c["strides"] = strides_;
  }
  c["padding"] = padding_ == tensor::Padding::kSame ? "same" : "valid";
  c["data_format"] = "channels_last";
  return c;
}

Result<std::unique_ptr<Layer>> GlobalPooling2D::FromConfig(tensor::PoolKind kind, int rank,
                                                           const std::string& name,
                                                           const nlohmann::json& config) {
  std::unique_ptr<GlobalPooling2D> l(new GlobalPooling2D(kind, name));
  l->rank_ = rank;
  ConfigReader r(config);
  r.ExpectOneOf("data_format", {"channels_last"});
  l->keepdims_ = r.Bool("keepdims", false);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> GlobalPooling2D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  const Shape& s = in[0];
  if (rank_ == 1) {
    if (s.size() != 2) {
      return Error("expects rank-2 input [steps, channels], got " + tensor::ShapeString(s));
    }
    if (keepdims_) return std::vector<Shape>{{1, s[1]}};
    return std::vector<Shape>{{s[1]}};
  }
  if (rank_ == 3) {
    if (s.size() != 4) {
      return Error("expects rank-4 input [D, H, W, C], got " + tensor::ShapeString(s));
    }
    if (keepdims_) return std::vector<Shape>{{1, 1, 1, s[3]}};
    return std::vector<Shape>{{s[3]}};
  }
  if (s.size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(s));
  }
  if (keepdims_) return std::vector<Shape>{{1, 1, s[2]}};
  return std::vector<Shape>{{s[2]}};
}

std::vector<Var> GlobalPooling2D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  tensor::Reduce r = kind_ == tensor::PoolKind::kMax ? tensor::Reduce::kMax : tensor::Reduce::kMean;
  if (rank_ == 1) return {fn::ReduceOp(r, inputs[0], {1}, keepdims_)};
  if (rank_ == 3) return {fn::ReduceOp(r, inputs[0], {1, 2, 3}, keepdims_)};
  return {fn::ReduceOp(r, inputs[0], {1, 2}, keepdims_)};
}

std::vector<Var> GlobalPooling2D::CallWithMasks(const std::vector<Var>& inputs,
                                                const std::vector<Tensor>& masks,
                                                const CallContext& ctx, Tensor* mask) {
  *mask = Tensor();
  if (masks.empty() || !masks[0].defined()) return Call(inputs, ctx);
  // sum(x * m) / sum(m) over the steps; a sequence with no real step gives 0.
  const Shape& s = inputs[0].shape();
  Var m(masks[0].Reshape({s[0], s[1], 1}));
  Var total = fn::ReduceOp(tensor::Reduce::kSum, fn::Mul(inputs[0], m), {1});
  Var count = fn::ReduceOp(tensor::Reduce::kSum, m, {1});
  Var mean = fn::Div(total, fn::Maximum(count, Var(Tensor::Full({1}, 1.f, m.value().device()))));
  if (keepdims_) mean = fn::Reshape(mean, {s[0], 1, s[2]});
  return {mean};
}

nlohmann::json GlobalPooling2D::Config() const {
  nlohmann::json c = Layer::Config();
  c["data_format"] = "channels_last";
  c["keepdims"] = keepdims_;
  return c;
}

}  // namespace edl::nn::layers
