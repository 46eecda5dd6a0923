#include "nn/layers/core.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::optional<Shape>> ReadInputShape(const nlohmann::json& config) {
  ConfigReader r(config);
  for (const char* field : {"batch_input_shape", "batch_shape", "input_shape"}) {
    if (r.Get(field) == nullptr) continue;
    std::vector<int64_t> dims = r.IntList(field, true);
    EDL_RETURN_IF_ERROR(r.status());
    bool with_batch = std::string(field) != "input_shape";
    if (with_batch && dims.empty()) {
      return InvalidArgument(std::string(field) + " must include the batch axis, got []");
    }
    Shape shape(dims.begin() + (with_batch ? 1 : 0), dims.end());
    for (int64_t d : shape) {
      if (d <= 0) {
        return InvalidArgument(std::string(field) + " must have known positive " +
                               "dimensions after the batch axis, got " + Describe(*r.Get(field)));
      }
    }
    return std::optional<Shape>(shape);
  }
  return std::optional<Shape>();
}

Result<tensor::DType> ReadDType(const nlohmann::json& config) {
  ConfigReader r(config);
  const nlohmann::json* v = r.Get("dtype");
  if (v == nullptr) return tensor::DType::kFloat32;
  std::string name;
  if (v->is_string()) {
    name = v->get<std::string>();
  } else if (v->is_object() && v->contains("config") && (*v)["config"].is_object() &&
             (*v)["config"].value("name", "") != "") {
    name = (*v)["config"]["name"].get<std::string>();
  }
  if (name == "float32") return tensor::DType::kFloat32;
  if (name == "int32" || name == "int64") return tensor::DType::kInt64;
  return InvalidArgument("dtype must be \"float32\", \"int32\" or \"int64\", got " + Describe(*v));
}

Result<std::unique_ptr<Layer>> InputLayer::FromConfig(const std::string& name,
                                                      const nlohmann::json& config) {
  EDL_ASSIGN_OR_RETURN(std::optional<Shape> shape, ReadInputShape(config));
  if (!shape) return InvalidArgument("batch_input_shape is required");
  EDL_ASSIGN_OR_RETURN(tensor::DType dtype, ReadDType(config));
  ConfigReader r(config);
  if (r.Bool("sparse", false)) r.Fail("sparse", "inputs are not supported");
  if (r.Bool("ragged", false)) r.Fail("ragged", "inputs are not supported");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(new InputLayer(name, *shape, dtype));
}

nlohmann::json InputLayer::Config() const {
  nlohmann::json shape = nlohmann::json::array({nullptr});
  for (int64_t d : shape_) shape.push_back(d);
  return {{"name", name()},
          {"batch_input_shape", shape},
          {"dtype", dtype_ == tensor::DType::kInt64 ? "int32" : "float32"},
          {"sparse", false}};
}

Result<std::unique_ptr<Layer>> Flatten::FromConfig(const std::string& name,
                                                   const nlohmann::json& config) {
  ConfigReader r(config);
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(new Flatten(name));
}

Result<std::vector<Shape>> Flatten::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return std::vector<Shape>{{tensor::NumElements(in[0])}};
}

std::vector<Var> Flatten::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  int64_t n = x.shape().empty() ? 1 : x.shape()[0];
  return {fn::Reshape(x, {n, n == 0 ? 0 : x.value().numel() / n})};
}

nlohmann::json Flatten::Config() const {
  nlohmann::json c = Layer::Config();
  c["data_format"] = "channels_last";
  return c;
}

Result<std::unique_ptr<Layer>> Reshape::FromConfig(const std::string& name,
                                                   const nlohmann::json& config) {
  std::unique_ptr<Reshape> l(new Reshape(name));
  ConfigReader r(config);
  if (r.Get("target_shape") == nullptr) r.Fail("target_shape", "is required");
  // TF.js (and some Keras 3 versions) write an inferred -1 as null.
  l->target_shape_ = r.IntList("target_shape", true);
  int unknown = 0;
  for (int64_t d : l->target_shape_) {
    if (d == -1) {
      ++unknown;
    } else if (d <= 0) {
      r.Fail("target_shape", "must hold positive sizes and at most one -1, got " +
                                 Describe(config["target_shape"]));
    }
  }
  if (unknown > 1) r.Fail("target_shape", "may hold at most one -1");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Reshape::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  int64_t n = tensor::NumElements(in[0]);
  int64_t known = 1;
  int unknown_at = -1;
  for (size_t i = 0; i < target_shape_.size(); ++i) {
    if (target_shape_[i] == -1) {
      unknown_at = static_cast<int>(i);
    } else {
      known *= target_shape_[i];
    }
  }
  Shape out = target_shape_;
  if (unknown_at >= 0 && known > 0 && n % known == 0) out[unknown_at] = n / known;
  if (tensor::NumElements(out) != n || (unknown_at >= 0 && out[unknown_at] < 0)) {
    return Error("cannot reshape input " + tensor::ShapeString(in[0]) + " (" + std::to_string(n) +
                 " elements) to target_shape " + tensor::ShapeString(target_shape_));
  }
  return std::vector<Shape>{out};
}

std::vector<Var> Reshape::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  Shape in(x.shape().begin() + 1, x.shape().end());
  Shape out = OutputShapes({in}).value()[0];
  out.insert(out.begin(), x.shape()[0]);
  return {fn::Reshape(x, out)};
}

nlohmann::json Reshape::Config() const {
  nlohmann::json c = Layer::Config();
  c["target_shape"] = target_shape_;
  return c;
}

Result<std::unique_ptr<Layer>> Dropout::FromConfig(const std::string& name,
                                                   const nlohmann::json& config) {
  std::unique_ptr<Dropout> l(new Dropout(name));
  ConfigReader r(config);
  if (r.Get("rate") == nullptr) r.Fail("rate", "is required");
  l->rate_ = r.Float("rate", 0.f);
  if (r.status().ok() && (l->rate_ < 0.f || l->rate_ >= 1.f)) {
    r.Fail("rate", "must be in [0, 1), got " + Describe(config["rate"]));
  }
  r.ExpectNull("noise_shape");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Dropout::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return in;
}

std::vector<Var> Dropout::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  if (!ctx.training || rate_ == 0.f) return inputs;
  EDL_CHECK(ctx.rng != nullptr) << "Dropout in training needs an rng";
  return {fn::Dropout(inputs[0], rate_, *ctx.rng, true)};
}

nlohmann::json Dropout::Config() const {
  nlohmann::json c = Layer::Config();
  c["rate"] = rate_;
  c["noise_shape"] = nullptr;
  c["seed"] = nullptr;
  return c;
}

}  // namespace edl::nn::layers
