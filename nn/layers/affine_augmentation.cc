#include "nn/layers/affine_augmentation.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>

#include "nn/layers/config_reader.h"

namespace edl::nn::layers {
namespace {

// TensorFlow's map_coordinate: an input coordinate outside [0, len - 1]
// brought back in as the fill mode says (constant leaves it outside).
float MapCoordinate(float in, int64_t len, FillMode fill) {
  const auto l = static_cast<float>(len);
  switch (fill) {
    case FillMode::kReflect:
      if (in < 0) {
        if (len <= 1) {
          in = 0;
        } else {
          const float sz2 = 2 * l;
          if (in < sz2) in = sz2 * static_cast<float>(static_cast<int64_t>(-in / sz2)) + in;
          in = in < -l ? in + sz2 : -in - 1;
        }
      } else if (in > l - 1) {
        if (len <= 1) {
          in = 0;
        } else {
          const float sz2 = 2 * l;
          in -= sz2 * static_cast<float>(static_cast<int64_t>(in / sz2));
          if (in >= l) in = sz2 - in - 1;
        }
      }
      return std::clamp(in, 0.f, l - 1);
    case FillMode::kWrap:
      if (in < 0) {
        if (len <= 1) {
          in = 0;
        } else {
          const float sz = l - 1;
          in += l * (static_cast<float>(static_cast<int64_t>(-in / sz)) + 1);
        }
      } else if (in > l - 1) {
        if (len <= 1) {
          in = 0;
        } else {
          const float sz = l - 1;
          in -= l * static_cast<float>(static_cast<int64_t>(in / sz));
        }
      }
      return std::clamp(in, 0.f, l - 1);
    case FillMode::kNearest: return std::clamp(in, 0.f, l - 1);
    case FillMode::kConstant: return in;
  }
  return in;
}

FillMode ParseFill(const std::string& s, bool* ok) {
  *ok = true;
  if (s == "reflect") return FillMode::kReflect;
  if (s == "wrap") return FillMode::kWrap;
  if (s == "nearest") return FillMode::kNearest;
  if (s == "constant") return FillMode::kConstant;
  *ok = false;
  return FillMode::kReflect;
}

const char* FillName(FillMode f) {
  switch (f) {
    case FillMode::kReflect: return "reflect";
    case FillMode::kWrap: return "wrap";
    case FillMode::kNearest: return "nearest";
    case FillMode::kConstant: return "constant";
  }
  return "reflect";
}

// A translation factor: in [-1, 1], lower <= upper.
void CheckRange(ConfigReader& r, const char* field, double lo, double hi) {
  if (r.status().ok() && (lo > hi || lo < -1 || hi > 1)) {
    r.Fail(field, "must be in [-1, 1] with lower <= upper");
  }
}

}  // namespace

void ProjectiveTransform(const float* in, int64_t h, int64_t w, int64_t c,
                         const std::array<float, 8>& t, FillMode fill, bool bilinear,
                         float fill_value, float* out) {
  auto read = [&](int64_t y, int64_t x, int64_t k) {
    return (0 <= y && y < h && 0 <= x && x < w) ? in[(y * w + x) * c + k] : fill_value;
  };
  for (int64_t oy = 0; oy < h; ++oy) {
    for (int64_t ox = 0; ox < w; ++ox) {
      const auto fx = static_cast<float>(ox), fy = static_cast<float>(oy);
      float* dst = out + (oy * w + ox) * c;
      const float projection = t[6] * fx + t[7] * fy + 1.f;
      if (projection == 0) {
        for (int64_t k = 0; k < c; ++k) dst[k] = fill_value;
        continue;
      }
      const float x = MapCoordinate((t[0] * fx + t[1] * fy + t[2]) / projection, w, fill);
      const float y = MapCoordinate((t[3] * fx + t[4] * fy + t[5]) / projection, h, fill);
      if (!bilinear) {
        const auto ny = static_cast<int64_t>(std::round(y));
        const auto nx = static_cast<int64_t>(std::round(x));
        for (int64_t k = 0; k < c; ++k) dst[k] = read(ny, nx, k);
        continue;
      }
      const float y0 = std::floor(y), x0 = std::floor(x);
      const float y1 = y0 + 1, x1 = x0 + 1;
      const auto iy0 = static_cast<int64_t>(y0), ix0 = static_cast<int64_t>(x0);
      for (int64_t k = 0; k < c; ++k) {
        const float top = (x1 - x) * read(iy0, ix0, k) + (x - x0) * read(iy0, ix0 + 1, k);
        const float bottom =
            (x1 - x) * read(iy0 + 1, ix0, k) + (x - x0) * read(iy0 + 1, ix0 + 1, k);
        dst[k] = (y1 - y) * top + (y - y0) * bottom;
      }
    }
  }
}

Status AffineAugmentation::ReadSampling(const nlohmann::json& config) {
  ConfigReader r(config);
  bool ok = true;
  const std::string fill = r.String("fill_mode", "reflect");
  fill_ = ParseFill(fill, &ok);
  if (!ok) r.Fail("fill_mode", "must be reflect, wrap, nearest or constant, got \"" + fill + "\"");
  const std::string interpolation = r.String("interpolation", "bilinear");
  if (interpolation != "bilinear" && interpolation != "nearest") {
    r.Fail("interpolation", "must be bilinear or nearest, got \"" + interpolation + "\"");
  }
  bilinear_ = interpolation == "bilinear";
  fill_value_ = r.Float("fill_value", 0.f);
  r.ExpectOneOf("data_format", {"channels_last"});
  ReadSeed(config);
  return r.status();
}

void AffineAugmentation::AddSampling(nlohmann::json& c) const {
  c["fill_mode"] = FillName(fill_);
  c["interpolation"] = bilinear_ ? "bilinear" : "nearest";
  c["fill_value"] = fill_value_;
}

void AffineAugmentation::Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
                                 float* out) const {
  ProjectiveTransform(in, h, w, c, Draw(rng, h, w), fill_, bilinear_, fill_value_, out);
}

// ---- RandomRotation

Result<std::unique_ptr<Layer>> RandomRotation::FromConfig(const std::string& name,
                                                          const nlohmann::json& config) {
  std::unique_ptr<RandomRotation> l(new RandomRotation(name));
  ConfigReader r(config);
  if (!ReadAugmentFactor(r, "factor", false, &l->lower_, &l->upper_) && r.status().ok()) {
    r.Fail("factor", "is required");
  }
  if (r.status().ok() && l->lower_ > l->upper_) r.Fail("factor", "must have lower <= upper");
  EDL_RETURN_IF_ERROR(r.status());
  EDL_RETURN_IF_ERROR(l->ReadSampling(config));
  return std::unique_ptr<Layer>(std::move(l));
}

std::array<float, 8> RandomRotation::Draw(AugmentRng& rng, int64_t h, int64_t w) const {
  const double angle = rng.Uniform(lower_ * 2 * std::numbers::pi, upper_ * 2 * std::numbers::pi);
  // Keras' get_rotation_matrix, in float as TensorFlow computes it.
  const auto cs = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
  const auto fw = static_cast<float>(w - 1), fh = static_cast<float>(h - 1);
  const float x_offset = (fw - (cs * fw - sn * fh)) / 2.f;
  const float y_offset = (fh - (sn * fw + cs * fh)) / 2.f;
  return {cs, -sn, x_offset, sn, cs, y_offset, 0.f, 0.f};
}

void RandomRotation::AddConfig(nlohmann::json& c) const {
  c["factor"] = {lower_, upper_};
  AddSampling(c);
}

// ---- RandomZoom

Result<std::unique_ptr<Layer>> RandomZoom::FromConfig(const std::string& name,
                                                      const nlohmann::json& config) {
  std::unique_ptr<RandomZoom> l(new RandomZoom(name));
  ConfigReader r(config);
  if (!ReadAugmentFactor(r, "height_factor", false, &l->h_lower_, &l->h_upper_) &&
      r.status().ok()) {
    r.Fail("height_factor", "is required");
  }
  l->has_width_ = ReadAugmentFactor(r, "width_factor", false, &l->w_lower_, &l->w_upper_);
  if (r.status().ok() && (l->h_lower_ > l->h_upper_ || l->h_lower_ < -1)) {
    r.Fail("height_factor", "must have -1 <= lower <= upper");
  }
  if (r.status().ok() && l->has_width_ && (l->w_lower_ > l->w_upper_ || l->w_lower_ < -1)) {
    r.Fail("width_factor", "must have -1 <= lower <= upper");
  }
  EDL_RETURN_IF_ERROR(r.status());
  EDL_RETURN_IF_ERROR(l->ReadSampling(config));
  return std::unique_ptr<Layer>(std::move(l));
}

std::array<float, 8> RandomZoom::Draw(AugmentRng& rng, int64_t h, int64_t w) const {
  const auto zh = static_cast<float>(rng.Uniform(1 + h_lower_, 1 + h_upper_));
  const float zw = has_width_ ? static_cast<float>(rng.Uniform(1 + w_lower_, 1 + w_upper_)) : zh;
  // Keras' get_zoom_matrix.
  const float x_offset = (static_cast<float>(w) - 1.f) / 2.f * (1.f - zw);
  const float y_offset = (static_cast<float>(h) - 1.f) / 2.f * (1.f - zh);
  return {zw, 0.f, x_offset, 0.f, zh, y_offset, 0.f, 0.f};
}

void RandomZoom::AddConfig(nlohmann::json& c) const {
  c["height_factor"] = {h_lower_, h_upper_};
  c["width_factor"] = has_width_ ? nlohmann::json({w_lower_, w_upper_}) : nlohmann::json(nullptr);
  AddSampling(c);
}

// ---- RandomTranslation

Result<std::unique_ptr<Layer>> RandomTranslation::FromConfig(const std::string& name,
                                                             const nlohmann::json& config) {
  std::unique_ptr<RandomTranslation> l(new RandomTranslation(name));
  ConfigReader r(config);
  if (!ReadAugmentFactor(r, "height_factor", false, &l->h_lower_, &l->h_upper_) &&
      r.status().ok()) {
    r.Fail("height_factor", "is required");
  }
  if (!ReadAugmentFactor(r, "width_factor", false, &l->w_lower_, &l->w_upper_) && r.status().ok()) {
    r.Fail("width_factor", "is required");
  }
  CheckRange(r, "height_factor", l->h_lower_, l->h_upper_);
  CheckRange(r, "width_factor", l->w_lower_, l->w_upper_);
  EDL_RETURN_IF_ERROR(r.status());
  EDL_RETURN_IF_ERROR(l->ReadSampling(config));
  return std::unique_ptr<Layer>(std::move(l));
}

std::array<float, 8> RandomTranslation::Draw(AugmentRng& rng, int64_t h, int64_t w) const {
  const auto dy = static_cast<float>(rng.Uniform(h_lower_, h_upper_)) * static_cast<float>(h);
  const auto dx = static_cast<float>(rng.Uniform(w_lower_, w_upper_)) * static_cast<float>(w);
  // Keras' get_translation_matrix.
  return {1.f, 0.f, -dx, 0.f, 1.f, -dy, 0.f, 0.f};
}

void RandomTranslation::AddConfig(nlohmann::json& c) const {
  c["height_factor"] = {h_lower_, h_upper_};
  c["width_factor"] = {w_lower_, w_upper_};
  AddSampling(c);
}

}  // namespace edl::nn::layers
