#include "nn/layers/pooling3d.h"

#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Pooling3D::FromConfig(tensor::PoolKind kind, const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<Pooling3D> l(new Pooling3D(kind, name));
  ConfigReader r(config);
  Window3D& w = l->window_;
  w.size = r.IntTriple("pool_size", {2, 2, 2});
  w.strides = r.IntTriple("strides", w.size);
  for (auto [field, v] : {std::pair<const char*, std::array<int64_t, 3>>{"pool_size", w.size},
                          {"strides", w.strides}}) {
    if (v[0] <= 0 || v[1] <= 0 || v[2] <= 0) r.Fail(field, "must be positive");
  }
  r.ExpectOneOf("padding", {"valid", "same"});
  w.padding =
      r.String("padding", "valid") == "same" ? tensor::Padding::kSame : tensor::Padding::kValid;
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Pooling3D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  const Shape& s = in[0];
  if (s.size() != 4) {
    return Error("expects rank-4 input [D, H, W, C], got " + tensor::ShapeString(s));
  }
  auto size = window_.OutputSize(s, "pool_size");
  if (!size.ok()) return Error("input " + tensor::ShapeString(s) + " " + size.status().message());
  return std::vector<Shape>{{(*size)[0], (*size)[1], (*size)[2], s[3]}};
}

std::vector<Var> Pooling3D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Shape s(inputs[0].shape().begin() + 1, inputs[0].shape().end());
  fn::Pool3DParams p;
  p.kernel = window_.size;
  p.strides = window_.strides;
  p.padding = window_.PaddingFor(s);
  return {fn::Pool3D(kind_, inputs[0], p)};
}

nlohmann::json Pooling3D::Config() const {
  nlohmann::json c = Layer::Config();
  c["pool_size"] = window_.size;
  c["strides"] = window_.strides;
  c["padding"] = window_.padding == tensor::Padding::kSame ? "same" : "valid";
  c["data_format"] = "channels_last";
  return c;
}

}  // namespace edl::nn::layers
