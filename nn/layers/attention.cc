#include "nn/layers/attention.h"

#include <cmath>

#include "nn/functional.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> MultiHeadAttention::FromConfig(const std::string& name,
                                                              const nlohmann::json& config) {
  std::unique_ptr<MultiHeadAttention> l(new MultiHeadAttention(name));
  ConfigReader r(config);
  l->heads_ = r.RequiredInt("num_heads");
  l->key_dim_ = r.RequiredInt("key_dim");
  l->value_dim_ = r.Int("value_dim", l->key_dim_);
  for (auto [field, v] : {std::pair<const char*, int64_t>{"num_heads", l->heads_},
                          {"key_dim", l->key_dim_},
                          {"value_dim", l->value_dim_}}) {
    if (r.status().ok() && v <= 0) r.Fail(field, "must be positive");
  }
  l->dropout_ = r.Float("dropout", 0.f);
  if (r.status().ok() && !(l->dropout_ >= 0.f && l->dropout_ < 1.f)) {
    r.Fail("dropout", "must be in [0, 1)");
  }
  l->use_bias_ = r.Bool("use_bias", true);
  if (const nlohmann::json* out = r.Get("output_shape")) {
    const nlohmann::json& o = out->is_array() && out->size() == 1 ? (*out)[0] : *out;
    if (o.is_number_integer() && o.get<int64_t>() > 0) {
      l->output_dim_ = o.get<int64_t>();
    } else {
      r.Fail("output_shape",
             "must be one positive integer (the output features), got " + Describe(*out));
    }
  }
  r.ExpectNull("attention_axes");
  l->kernel_bias_ = ReadKernelBiasConfig(r);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> MultiHeadAttention::OutputShapes(const std::vector<Shape>& in) {
  if (in.size() < 2 || in.size() > 4) {
    return Error("expects query, value and optionally key and attention_mask, got " +
                 std::to_string(in.size()) + " inputs");
  }
  for (size_t i = 0; i < std::min<size_t>(in.size(), 3); ++i) {
    if (in[i].size() != 2) {
      static const char* const kNames[] = {"query", "value", "key"};
      return Error(std::string(kNames[i]) + " must be [steps, features], got " +
                   tensor::ShapeString(in[i]));
    }
  }
  const Shape& q = in[0];
  const Shape& v = in[1];
  const Shape& k = in.size() > 2 ? in[2] : in[1];
  if (k[0] != v[0]) {
    return Error("key " + tensor::ShapeString(k) + " and value " + tensor::ShapeString(v) +
                 " must have the same steps");
  }
  if (in.size() == 4 && in[3] != Shape{q[0], v[0]}) {
    return Error("attention_mask must be [query steps, value steps] = " +
                 tensor::ShapeString({q[0], v[0]}) + ", got " + tensor::ShapeString(in[3]));
  }
  const Shape features{q[1], v[1], k[1]};
  if (!built_for_.empty() && built_for_ != features) {
    return Error("was built for query/value/key features " + tensor::ShapeString(built_for_) +
                 ", got " + tensor::ShapeString(features));
  }
  return std::vector<Shape>{{q[0], output_dim_ > 0 ? output_dim_ : q[1]}};
}

Status MultiHeadAttention::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  const int64_t dq = in[0][1], dv = in[1][1], dk = in.size() > 2 ? in[2][1] : dv;
  built_for_ = {dq, dv, dk};
  const int64_t out = output_dim_ > 0 ? output_dim_ : dq;
  auto kernel = [&](const std::string& n, const Shape& s) {
    return AddWeight(n + "/kernel", MakeWeight(kernel_bias_.kernel_init, s, rng), true,
                     kernel_bias_.kernel_reg.Function());
  };
  auto bias = [&](const std::string& n, const Shape& s) -> Parameter* {
    if (!use_bias_) return nullptr;
    return AddWeight(n + "/bias", MakeWeight(kernel_bias_.bias_init, s, rng), true,
                     kernel_bias_.bias_reg.Function());
  };
  query_kernel_ = kernel("query", {dq, heads_, key_dim_});
  query_bias_ = bias("query", {heads_, key_dim_});
  key_kernel_ = kernel("key", {dk, heads_, key_dim_});
  key_bias_ = bias("key", {heads_, key_dim_});
  value_kernel_ = kernel("value", {dv, heads_, value_dim_});
  value_bias_ = bias("value", {heads_, value_dim_});
  output_kernel_ = kernel("attention_output", {heads_, value_dim_, out});
  output_bias_ = bias("attention_output", {out});
  return Status::Ok();
}

Var MultiHeadAttention::Project(const Var& x, Parameter* kernel, Parameter* bias,
                                int64_t dim) const {
  const int64_t n = x.shape()[0], t = x.shape()[1], d = x.shape()[2];
  Var y = fn::Dense(fn::Reshape(x, {n * t, d}), fn::Reshape(Use(*kernel), {d, heads_ * dim}),
                    bias ? fn::Reshape(Use(*bias), {heads_ * dim}) : Var());
  return fn::Transpose(fn::Reshape(y, {n, t, heads_, dim}), {0, 2, 1, 3});
}

std::vector<Var> MultiHeadAttention::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& query = inputs[0];
  const Var& value = inputs[1];
  const Var& key = inputs.size() > 2 ? inputs[2] : inputs[1];
  const int64_t n = query.shape()[0], tq = query.shape()[1], tv = value.shape()[1];
  // [N, H, T, dim], folded to [N * H, T, dim] for batched matmuls.
  Var q =
      fn::Reshape(Project(query, query_kernel_, query_bias_, key_dim_), {n * heads_, tq, key_dim_});
  Var k = fn::Reshape(Project(key, key_kernel_, key_bias_, key_dim_), {n * heads_, tv, key_dim_});
  Var v = fn::Reshape(Project(value, value_kernel_, value_bias_, value_dim_),
                      {n * heads_, tv, value_dim_});
  q = fn::Affine(q, 1.f / std::sqrt(static_cast<float>(key_dim_)));
  Var scores = fn::Reshape(fn::MatMul(q, k, false, true), {n, heads_, tq, tv});
  if (inputs.size() > 3) {
    // + (1 - mask) * -1e9, the mask [N, Tq, Tv] broadcast over the heads.
    Var mask = fn::Reshape(Var(inputs[3].value()), {n, 1, tq, tv});
    scores = fn::Add(scores, fn::Affine(mask, 1e9f, -1e9f));
  }
  Var probs = fn::Softmax(scores, -1);
  if (ctx.training && dropout_ > 0.f && ctx.rng != nullptr) {
    probs = fn::Dropout(probs, dropout_, *ctx.rng, true);
  }
  Var attended = fn::MatMul(fn::Reshape(probs, {n * heads_, tq, tv}), v);  // [N*H, Tq, vd]
  Var merged =
      fn::Reshape(fn::Transpose(fn::Reshape(attended, {n, heads_, tq, value_dim_}), {0, 2, 1, 3}),
                  {n * tq, heads_ * value_dim_});
  const int64_t out = output_kernel_->value.dim(2);
  Var y = fn::Dense(merged, fn::Reshape(Use(*output_kernel_), {heads_ * value_dim_, out}),
                    output_bias_ ? Use(*output_bias_) : Var());
  return {fn::Reshape(y, {n, tq, out})};
}

nlohmann::json MultiHeadAttention::Config() const {
  nlohmann::json c = Layer::Config();
  c["num_heads"] = heads_;
  c["key_dim"] = key_dim_;
  c["value_dim"] = value_dim_;
  c["dropout"] = dropout_;
  c["use_bias"] = use_bias_;
  c["output_shape"] = output_dim_ > 0 ? nlohmann::json(output_dim_) : nlohmann::json();
  c["attention_axes"] = nullptr;
  WriteKernelBiasConfig(kernel_bias_, c);
  return c;
}

}  // namespace edl::nn::layers
