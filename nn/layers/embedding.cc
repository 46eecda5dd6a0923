#include "nn/layers/embedding.h"

#include "nn/functional.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Embedding::FromConfig(const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<Embedding> l(new Embedding(name));
  ConfigReader r(config);
  l->input_dim_ = r.RequiredInt("input_dim");
  l->output_dim_ = r.RequiredInt("output_dim");
  if (r.status().ok() && l->input_dim_ <= 0) r.Fail("input_dim", "must be positive");
  if (r.status().ok() && l->output_dim_ <= 0) r.Fail("output_dim", "must be positive");
  l->init_ =
      ReadInitializer(r, "embeddings_initializer",
                      {{"class_name", "RandomUniform"},
                       {"config", {{"minval", -0.05}, {"maxval", 0.05}, {"seed", nullptr}}}});
  l->reg_ = ReadRegularizer(r, "embeddings_regularizer");
  r.ExpectNull("activity_regularizer");
  r.ExpectNull("embeddings_constraint");
  l->mask_zero_ = r.Bool("mask_zero", false);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Embedding::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (mask_zero_ && in[0].size() != 1) {
    return Error("mask_zero needs ids of shape [steps], got " + tensor::ShapeString(in[0]));
  }
  Shape out = in[0];
  out.push_back(output_dim_);
  return std::vector<Shape>{out};
}

Status Embedding::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  embeddings_ = AddWeight("embeddings", MakeWeight(init_, {input_dim_, output_dim_}, rng), true,
                          reg_.Function());
  return Status::Ok();
}

std::vector<Var> Embedding::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return {Lookup(inputs[0], nullptr)};
}

std::vector<Var> Embedding::CallWithMasks(const std::vector<Var>& inputs,
                                          const std::vector<Tensor>& masks, const CallContext& ctx,
                                          Tensor* mask) {
  *mask = Tensor();
  return {Lookup(inputs[0], mask_zero_ ? mask : nullptr)};
}

Var Embedding::Lookup(const Var& input, Tensor* mask) {
  Tensor ids = input.value();
  if (ids.dtype() != tensor::DType::kInt64) ids = tensor::Cast(ids, tensor::DType::kInt64);
  // The range check reads the ids on the host (device ids are downloaded:
  // they are few, and an out-of-range id must not reach Gather).
  const Tensor host_ids = ids.On(tensor::Device::kCPU);
  const int64_t* p = host_ids.i64();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    EDL_CHECK(p[i] >= 0 && p[i] < input_dim_) << "layer \"" << name() << "\" (Embedding): id "
                                              << p[i] << " is outside [0, " << input_dim_ << ")";
  }
  if (mask != nullptr) {
    Tensor m = Tensor::Empty(ids.shape());
    for (int64_t i = 0; i < ids.numel(); ++i) m.f32()[i] = p[i] != 0 ? 1.f : 0.f;
    *mask = m.On(ids.device());
  }
  return fn::Embedding(*embeddings_, ids);
}

nlohmann::json Embedding::Config() const {
  nlohmann::json c = Layer::Config();
  c["input_dim"] = input_dim_;
  c["output_dim"] = output_dim_;
  c["embeddings_initializer"] = init_.json;
  c["embeddings_regularizer"] = reg_.json;
  c["activity_regularizer"] = nullptr;
  c["embeddings_constraint"] = nullptr;
  c["mask_zero"] = mask_zero_;
  return c;
}

}  // namespace edl::nn::layers
