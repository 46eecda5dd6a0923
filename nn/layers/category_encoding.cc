#include "nn/layers/category_encoding.h"

#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> CategoryEncoding::FromConfig(const std::string& name,
                                                            const nlohmann::json& config) {
  std::unique_ptr<CategoryEncoding> l(new CategoryEncoding(name));
  ConfigReader r(config);
  l->num_tokens_ = r.RequiredInt("num_tokens");
  if (r.status().ok() && l->num_tokens_ <= 0) r.Fail("num_tokens", "must be positive");
  // Keras writes snake_case; TF.js camelCase.
  r.ExpectOneOf("output_mode", {"multi_hot", "multiHot", "count", "one_hot", "oneHot"});
  const std::string mode = r.String("output_mode", "multi_hot");
  l->mode_ = mode == "count"                         ? Mode::kCount
             : mode == "one_hot" || mode == "oneHot" ? Mode::kOneHot
                                                     : Mode::kMultiHot;
  if (r.Bool("sparse", false)) r.Fail("sparse", "true is not supported; use false");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> CategoryEncoding::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() > 1) {
    return Error("expects ids of shape [] or [k], got " + tensor::ShapeString(in[0]));
  }
  if (mode_ == Mode::kOneHot && in[0].size() == 1 && in[0][0] > 1) {
    return std::vector<Shape>{{in[0][0], num_tokens_}};
  }
  return std::vector<Shape>{{num_tokens_}};
}

std::vector<Var> CategoryEncoding::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Tensor ids = inputs[0].value();
  if (ids.dtype() != tensor::DType::kInt64) ids = tensor::Cast(ids, tensor::DType::kInt64);
  ids = ids.On(tensor::Device::kCPU);
  const int64_t n = ids.rank() > 0 ? ids.dim(0) : 1, k = n > 0 ? ids.numel() / n : 0;
  const bool per_id = mode_ == Mode::kOneHot && k > 1;
  Tensor y = Tensor::Zeros(per_id ? Shape{n, k, num_tokens_} : Shape{n, num_tokens_});
  float* py = y.f32();
  const int64_t* p = ids.i64();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t id = p[i * k + j];
      EDL_CHECK(id >= 0 && id < num_tokens_) << "layer \"" << name() << "\" (CategoryEncoding): id "
                                             << id << " is outside [0, " << num_tokens_ << ")";
      float& out = py[(per_id ? i * k + j : i) * num_tokens_ + id];
      out = mode_ == Mode::kCount ? out + 1.f : 1.f;
    }
  }
  return {Var(y.On(inputs[0].value().device()))};
}

nlohmann::json CategoryEncoding::Config() const {
  nlohmann::json c = Layer::Config();
  c["num_tokens"] = num_tokens_;
  c["output_mode"] = mode_ == Mode::kCount    ? "count"
                     : mode_ == Mode::kOneHot ? "one_hot"
                                              : "multi_hot";
  c["sparse"] = false;
  return c;
}

}  // namespace edl::nn::layers
