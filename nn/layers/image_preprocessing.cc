#include "nn/layers/image_preprocessing.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {
namespace {

// The transposed interpolation matrix [in, out] of tf.image.resize along one
// axis (half-pixel centres): out[j] = sum_i m[i, j] in[i].
Tensor InterpolationMatrix(int64_t in, int64_t out, bool bilinear) {
  std::vector<float> m(static_cast<size_t>(in * out), 0.f);
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (int64_t j = 0; j < out; ++j) {
    if (!bilinear) {
      const int64_t i = std::min(static_cast<int64_t>(std::floor((j + 0.5) * scale)), in - 1);
      m[i * out + j] = 1.f;
      continue;
    }
    const double at = (j + 0.5) * scale - 0.5;
    const double lo_f = std::floor(at);
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(lo_f), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(at)), in - 1);
    const double frac = at - lo_f;
    m[lo * out + j] += static_cast<float>(1.0 - frac);
    m[hi * out + j] += static_cast<float>(frac);
  }
  return Tensor::FromVector({in, out}, m);
}

// x [B, L, M] resized along L by the matrix `at` [L, OL] -> [B, OL, M].
Var ResizeMiddle(const Var& x, const Tensor& at) {
  const Var moved = fn::Transpose(x, {0, 2, 1});  // [B, M, L]
  const Var resized = fn::MatMul(moved, Var(at.On(x.value().device())));
  return fn::Transpose(resized, {0, 2, 1});
}

void ReadSize(ConfigReader& r, int64_t* height, int64_t* width) {
  *height = r.RequiredInt("height");
  *width = r.RequiredInt("width");
  if (r.status().ok() && *height <= 0) r.Fail("height", "must be positive");
  if (r.status().ok() && *width <= 0) r.Fail("width", "must be positive");
  r.ExpectOneOf("data_format", {"channels_last"});
}

}  // namespace

Result<std::unique_ptr<Layer>> Resizing::FromConfig(const std::string& name,
                                                    const nlohmann::json& config) {
  std::unique_ptr<Resizing> l(new Resizing(name));
  ConfigReader r(config);
  ReadSize(r, &l->height_, &l->width_);
  const std::string interpolation = r.String("interpolation", "bilinear");
  if (interpolation != "bilinear" && interpolation != "nearest") {
    r.Fail("interpolation", "must be bilinear or nearest, got \"" + interpolation + "\"");
  }
  l->bilinear_ = interpolation == "bilinear";
  l->crop_to_aspect_ratio_ = r.Bool("crop_to_aspect_ratio", false);
  if (r.Bool("pad_to_aspect_ratio", false)) r.Fail("pad_to_aspect_ratio", "true is not supported");
  if (r.Bool("antialias", false)) r.Fail("antialias", "true is not supported");
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Resizing::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(in[0]));
  }
  return std::vector<Shape>{{height_, width_, in[0][2]}};
}

std::vector<Var> Resizing::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Var x = inputs[0];
  const int64_t n = x.shape()[0], c = x.shape()[3];
  int64_t h = x.shape()[1], w = x.shape()[2];
  if (crop_to_aspect_ratio_) {
    // Keras: the largest centred window of the target aspect ratio.
    const int64_t crop_h =
        std::min(h, static_cast<int64_t>(static_cast<double>(w * height_) / width_));
    const int64_t crop_w =
        std::min(w, static_cast<int64_t>(static_cast<double>(h * width_) / height_));
    x = fn::Slice(fn::Slice(x, 1, (h - crop_h) / 2, crop_h), 2, (w - crop_w) / 2, crop_w);
    h = crop_h;
    w = crop_w;
  }
  // Along the height: [N, H, W * C]; then along the width: [N * OH, W, C].
  Var y = fn::Reshape(
      ResizeMiddle(fn::Reshape(x, {n, h, w * c}), InterpolationMatrix(h, height_, bilinear_)),
      {n * height_, w, c});
  y = ResizeMiddle(y, InterpolationMatrix(w, width_, bilinear_));
  return {fn::Reshape(y, {n, height_, width_, c})};
}

nlohmann::json Resizing::Config() const {
  nlohmann::json c = Layer::Config();
  c["height"] = height_;
  c["width"] = width_;
  c["interpolation"] = bilinear_ ? "bilinear" : "nearest";
  c["crop_to_aspect_ratio"] = crop_to_aspect_ratio_;
  return c;
}

Result<std::unique_ptr<Layer>> CenterCrop::FromConfig(const std::string& name,
                                                      const nlohmann::json& config) {
  std::unique_ptr<CenterCrop> l(new CenterCrop(name));
  ConfigReader r(config);
  ReadSize(r, &l->height_, &l->width_);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> CenterCrop::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(in[0]));
  }
  if (in[0][0] < height_ || in[0][1] < width_) {
    return Error("input " + tensor::ShapeString(in[0]) + " is smaller than the " +
                 std::to_string(height_) + "x" + std::to_string(width_) +
                 " window (resizing up is not supported)");
  }
  return std::vector<Shape>{{height_, width_, in[0][2]}};
}

std::vector<Var> CenterCrop::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  const int64_t h = x.shape()[1], w = x.shape()[2];
  return {fn::Slice(fn::Slice(x, 1, (h - height_) / 2, height_), 2, (w - width_) / 2, width_)};
}

nlohmann::json CenterCrop::Config() const {
  nlohmann::json c = Layer::Config();
  c["height"] = height_;
  c["width"] = width_;
  return c;
}

}  // namespace edl::nn::layers
