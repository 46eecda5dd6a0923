#include "nn/layers/reshaping.h"

#include <algorithm>

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {
namespace {

// n, [rows, cols] or [[top, bottom], [left, right]] -> top, bottom, left, right.
std::array<int64_t, 4> ReadEdges(ConfigReader& r, const char* field, int64_t def) {
  const nlohmann::json* v = r.Get(field);
  if (v == nullptr) return {def, def, def, def};
  auto bad = [&] {
    r.Fail(field, "must be an integer, 2 integers or 2 pairs of integers, got " + v->dump());
    return std::array<int64_t, 4>{0, 0, 0, 0};
  };
  std::array<int64_t, 4> e{};
  if (v->is_number_integer()) {
    e.fill(v->get<int64_t>());
  } else if (v->is_array() && v->size() == 2) {
    for (int i = 0; i < 2; ++i) {
      const nlohmann::json& d = (*v)[i];
      if (d.is_number_integer()) {
        e[2 * i] = e[2 * i + 1] = d.get<int64_t>();
      } else if (d.is_array() && d.size() == 2 && d[0].is_number_integer() &&
                 d[1].is_number_integer()) {
        e[2 * i] = d[0].get<int64_t>();
        e[2 * i + 1] = d[1].get<int64_t>();
      } else {
        return bad();
      }
    }
  } else {
    return bad();
  }
  for (int64_t x : e) {
    if (x < 0) r.Fail(field, "must not be negative, got " + v->dump());
  }
  return e;
}

Status ExpectImage(const Layer& l, const std::vector<Shape>& in) {
  if (in.size() != 1 || in[0].size() != 3) {
    return InvalidArgument("layer \"" + l.name() + "\" (" + l.class_name() +
                           "): expects one rank-3 input [H, W, C], got " +
                           (in.empty() ? std::string("none") : tensor::ShapeString(in[0])));
  }
  return Status::Ok();
}

// `copies` of x along a new axis after `axis`, merged into it: each slice
// of x along `axis` repeated `copies` times in place.
Var RepeatEach(const Var& x, int axis, int64_t copies) {
  if (copies == 1) return x;
  Shape split = x.shape();
  split.insert(split.begin() + axis + 1, 1);
  Var one = fn::Reshape(x, split);
  Var repeated = fn::Concat(std::vector<Var>(static_cast<size_t>(copies), one), axis + 1);
  Shape merged = x.shape();
  merged[axis] *= copies;
  return fn::Reshape(repeated, merged);
}

}  // namespace

// ---- ZeroPadding2D, Cropping2D ----------------------------------------------

Result<std::unique_ptr<Layer>> Edges2D::FromConfig(bool crop, const std::string& name,
                                                   const nlohmann::json& config) {
  std::unique_ptr<Edges2D> l(new Edges2D(crop, name));
  ConfigReader r(config);
  l->edges_ = ReadEdges(r, crop ? "cropping" : "padding", crop ? 0 : 1);
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Edges2D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectImage(*this, in));
  Shape out = in[0];
  const int64_t sign = crop_ ? -1 : 1;
  out[0] += sign * (edges_[0] + edges_[1]);
  out[1] += sign * (edges_[2] + edges_[3]);
  if (out[0] <= 0 || out[1] <= 0) {
    return Error("cropping " + std::to_string(edges_[0] + edges_[1]) + " rows and " +
                 std::to_string(edges_[2] + edges_[3]) + " columns leaves nothing of input " +
                 tensor::ShapeString(in[0]));
  }
  return std::vector<Shape>{out};
}

std::vector<Var> Edges2D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Var x = inputs[0];
  for (int axis = 1; axis <= 2; ++axis) {
    const int64_t before = edges_[2 * (axis - 1)], after = edges_[2 * (axis - 1) + 1];
    if (before == 0 && after == 0) continue;
    if (crop_) {
      x = fn::Slice(x, axis, before, x.shape()[axis] - before - after);
      continue;
    }
    x = fn::ZeroPad(x, axis, before, after);
  }
  return {x};
}

nlohmann::json Edges2D::Config() const {
  nlohmann::json c = Layer::Config();
  c[crop_ ? "cropping" : "padding"] = {{edges_[0], edges_[1]}, {edges_[2], edges_[3]}};
  c["data_format"] = "channels_last";
  return c;
}

// ---- UpSampling2D -----------------------------------------------------------

Result<std::unique_ptr<Layer>> UpSampling2D::FromConfig(const std::string& name,
                                                        const nlohmann::json& config) {
  std::unique_ptr<UpSampling2D> l(new UpSampling2D(name));
  ConfigReader r(config);
  l->size_ = r.IntPair("size", {2, 2});
  for (int64_t v : l->size_) {
    if (r.status().ok() && v <= 0) r.Fail("size", "must be positive");
  }
  r.ExpectOneOf("interpolation", {"nearest"});
  r.ExpectOneOf("data_format", {"channels_last"});
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> UpSampling2D::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectImage(*this, in));
  return std::vector<Shape>{{in[0][0] * size_[0], in[0][1] * size_[1], in[0][2]}};
}

std::vector<Var> UpSampling2D::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return {RepeatEach(RepeatEach(inputs[0], 1, size_[0]), 2, size_[1])};
}

nlohmann::json UpSampling2D::Config() const {
  nlohmann::json c = Layer::Config();
  c["size"] = size_;
  c["interpolation"] = "nearest";
  c["data_format"] = "channels_last";
  return c;
}

// ---- RepeatVector -----------------------------------------------------------

Result<std::unique_ptr<Layer>> RepeatVector::FromConfig(const std::string& name,
                                                        const nlohmann::json& config) {
  std::unique_ptr<RepeatVector> l(new RepeatVector(name));
  ConfigReader r(config);
  l->n_ = r.RequiredInt("n");
  if (r.status().ok() && l->n_ <= 0) r.Fail("n", "must be positive");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> RepeatVector::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != 1) {
    return Error("expects rank-1 input [features], got " + tensor::ShapeString(in[0]));
  }
  return std::vector<Shape>{{n_, in[0][0]}};
}

std::vector<Var> RepeatVector::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  return {RepeatEach(fn::Reshape(x, {x.shape()[0], 1, x.shape()[1]}), 1, n_)};
}

nlohmann::json RepeatVector::Config() const {
  nlohmann::json c = Layer::Config();
  c["n"] = n_;
  return c;
}

// ---- Rescaling --------------------------------------------------------------

Result<std::unique_ptr<Layer>> Rescaling::FromConfig(const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<Rescaling> l(new Rescaling(name));
  ConfigReader r(config);
  if (r.Get("scale") == nullptr) r.Fail("scale", "is required");
  l->scale_ = r.Float("scale", 1.f);
  l->offset_ = r.Float("offset", 0.f);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Rescaling::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  return in;
}

std::vector<Var> Rescaling::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return {fn::Affine(inputs[0], scale_, offset_)};
}

nlohmann::json Rescaling::Config() const {
  nlohmann::json c = Layer::Config();
  c["scale"] = scale_;
  c["offset"] = offset_;
  return c;
}

Result<std::unique_ptr<Layer>> Permute::FromConfig(const std::string& name,
                                                   const nlohmann::json& config) {
  std::unique_ptr<Permute> l(new Permute(name));
  ConfigReader r(config);
  if (r.Get("dims") == nullptr) r.Fail("dims", "is required");
  l->dims_ = r.IntList("dims", false);
  std::vector<int64_t> sorted = l->dims_;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size() && r.status().ok(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i) + 1) {
      r.Fail("dims", "must be a permutation of 1.." + std::to_string(sorted.size()) + ", got " +
                         Describe(config["dims"]));
    }
  }
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Permute::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != dims_.size()) {
    return Error("dims has " + std::to_string(dims_.size()) + " axes, the input " +
                 tensor::ShapeString(in[0]) + " has " + std::to_string(in[0].size()));
  }
  Shape out;
  for (int64_t d : dims_) out.push_back(in[0][d - 1]);
  return std::vector<Shape>{out};
}

std::vector<Var> Permute::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  std::vector<int> perm{0};
  for (int64_t d : dims_) perm.push_back(static_cast<int>(d));
  return {fn::Transpose(inputs[0], perm)};
}

nlohmann::json Permute::Config() const {
  nlohmann::json c = Layer::Config();
  c["dims"] = dims_;
  return c;
}

}  // namespace edl::nn::layers
