#include "nn/layers/augmentation.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "nn/layers/config_reader.h"
#include "nn/layers/image_preprocessing.h"
#include "tensor/ops.h"

namespace edl::nn::layers {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t HashName(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

void ReadValueRange(ConfigReader& r, double* lo, double* hi) {
  const nlohmann::json* v = r.Get("value_range");
  if (v == nullptr) return;
  if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number() || !(*v)[1].is_number() ||
      (*v)[0].get<double>() >= (*v)[1].get<double>()) {
    r.Fail("value_range", "must be [low, high] with low < high, got " + v->dump());
    return;
  }
  *lo = (*v)[0].get<double>();
  *hi = (*v)[1].get<double>();
}

}  // namespace

// "factor": f (-> {-f, f}) or [lo, hi] (-> {lo, hi}, or {-lo, hi} when
// `negate_lower`: RandomContrast's [lo, hi] means U(1 - lo, 1 + hi)).
bool ReadAugmentFactor(ConfigReader& r, const char* field, bool negate_lower, double* lo,
                       double* hi) {
  const nlohmann::json* f = r.Get(field);
  if (f == nullptr) return false;
  if (f->is_number()) {
    const double v = f->get<double>();
    *lo = -v;
    *hi = v;
  } else if (f->is_array() && f->size() == 2 && (*f)[0].is_number() && (*f)[1].is_number()) {
    *lo = (*f)[0].get<double>();
    *hi = (*f)[1].get<double>();
    if (negate_lower) *lo = -*lo;  // contrast: [lo, hi] means U(1 - lo, 1 + hi)
  } else {
    r.Fail(field, "must be a number or a list [lower, upper], got " + f->dump());
    return false;
  }
  return true;
}

uint64_t AugmentationKey(uint64_t seed, int64_t epoch, int64_t record) {
  return Mix(Mix(Mix(seed) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(record));
}

uint64_t AugmentRng::Next() { return Mix(state_++ * 0x9E3779B97F4A7C15ull); }

double AugmentRng::Uniform(double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(Next() >> 11) * 0x1.0p-53);
}

void RandomAugmentation::ReadSeed(const nlohmann::json& config) {
  auto it = config.find("seed");
  if (it != config.end() && it->is_number_integer()) {
    seed_ = it->get<int64_t>();
    seeded_ = true;
  }
}

nlohmann::json RandomAugmentation::Config() const {
  nlohmann::json c = Layer::Config();
  c["seed"] = seeded_ ? nlohmann::json(seed_) : nlohmann::json(nullptr);
  AddConfig(c);
  return c;
}

Result<std::vector<Shape>> RandomAugmentation::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != 3) {
    return Error("expects rank-3 input [H, W, C], got " + tensor::ShapeString(in[0]));
  }
  return in;
}

std::vector<Var> RandomAugmentation::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Var& x = inputs[0];
  if (!ctx.training) return {Infer(x)};
  if (x.requires_grad() && !warned_) {
    warned_ = true;
    EDL_LOG(WARNING) << "layer \"" << name() << "\" (" << class_name()
                     << ") passes no gradient to the layers before it; put augmentation layers "
                        "first, on the model's input";
  }
  Tensor in = x.value().On(tensor::Device::kCPU);
  if (in.dtype() != tensor::DType::kFloat32) in = tensor::Cast(in, tensor::DType::kFloat32);
  const int64_t n = in.dim(0), h = in.dim(1), w = in.dim(2), c = in.dim(3);
  auto shapes = OutputShapesFor({{h, w, c}});
  EDL_CHECK(shapes.ok()) << shapes.status().ToString();
  const Shape& o = (*shapes)[0];
  Tensor out = Tensor::Empty({n, o[0], o[1], o[2]}, tensor::DType::kFloat32);
  const uint64_t layer = HashName(name()) ^ Mix(static_cast<uint64_t>(seed_));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t key = ctx.record_keys != nullptr ? (*ctx.record_keys)[i] : (*ctx.rng)();
    AugmentRng rng(Mix(key ^ layer));
    Augment(rng, in.f32() + i * h * w * c, h, w, c, out.f32() + i * o[0] * o[1] * o[2]);
  }
  return {Var(out.On(x.value().device()))};
}

// ---- RandomFlip

Result<std::unique_ptr<Layer>> RandomFlip::FromConfig(const std::string& name,
                                                      const nlohmann::json& config) {
  std::unique_ptr<RandomFlip> l(new RandomFlip(name));
  ConfigReader r(config);
  const std::string mode = r.String("mode", "horizontal_and_vertical");
  if (mode != "horizontal" && mode != "vertical" && mode != "horizontal_and_vertical") {
    r.Fail("mode", "must be horizontal, vertical or horizontal_and_vertical, got \"" + mode + "\"");
  }
  l->horizontal_ = mode != "vertical";
  l->vertical_ = mode != "horizontal";
  r.ExpectOneOf("data_format", {"channels_last"});
  l->ReadSeed(config);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

void RandomFlip::Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
                         float* out) const {
  const bool flip_x = horizontal_ && rng.Uniform(0, 1) < 0.5;
  const bool flip_y = vertical_ && rng.Uniform(0, 1) < 0.5;
  for (int64_t y = 0; y < h; ++y) {
    const int64_t sy = flip_y ? h - 1 - y : y;
    for (int64_t x = 0; x < w; ++x) {
      const int64_t sx = flip_x ? w - 1 - x : x;
      std::copy_n(in + (sy * w + sx) * c, c, out + (y * w + x) * c);
    }
  }
}

void RandomFlip::AddConfig(nlohmann::json& c) const {
  c["mode"] = horizontal_ && vertical_ ? "horizontal_and_vertical"
              : horizontal_            ? "horizontal"
                                       : "vertical";
}

// ---- RandomContrast

Result<std::unique_ptr<Layer>> RandomContrast::FromConfig(const std::string& name,
                                                          const nlohmann::json& config) {
  std::unique_ptr<RandomContrast> l(new RandomContrast(name));
  ConfigReader r(config);
  if (!ReadAugmentFactor(r, "factor", /*negate_lower=*/true, &l->lower_, &l->upper_) &&
      r.status().ok()) {
    r.Fail("factor", "is required");
  }
  // lower_ holds -lo: c ~ U(1 - lo, 1 + hi).
  if (r.status().ok() && (-l->lower_ < 0 || l->upper_ < 0 || -l->lower_ > 1)) {
    r.Fail("factor", "must be in [0, 1] (the lower bound) and >= 0 (the upper bound)");
  }
  ReadValueRange(r, &l->range_lo_, &l->range_hi_);
  l->ReadSeed(config);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

void RandomContrast::Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
                             float* out) const {
  const double factor = rng.Uniform(1 + lower_, 1 + upper_);
  for (int64_t k = 0; k < c; ++k) {
    double sum = 0;
    for (int64_t p = 0; p < h * w; ++p) sum += in[p * c + k];
    const double mean = sum / static_cast<double>(h * w);
    for (int64_t p = 0; p < h * w; ++p) {
      const double v = (in[p * c + k] - mean) * factor + mean;
      out[p * c + k] = static_cast<float>(std::clamp(v, range_lo_, range_hi_));
    }
  }
}

void RandomContrast::AddConfig(nlohmann::json& c) const {
  c["factor"] = {-lower_, upper_};
  c["value_range"] = {range_lo_, range_hi_};
}

// ---- RandomBrightness

Result<std::unique_ptr<Layer>> RandomBrightness::FromConfig(const std::string& name,
                                                            const nlohmann::json& config) {
  std::unique_ptr<RandomBrightness> l(new RandomBrightness(name));
  ConfigReader r(config);
  if (!ReadAugmentFactor(r, "factor", /*negate_lower=*/false, &l->lower_, &l->upper_) &&
      r.status().ok()) {
    r.Fail("factor", "is required");
  }
  if (r.status().ok() && (l->lower_ < -1 || l->upper_ > 1 || l->lower_ > l->upper_)) {
    r.Fail("factor", "must be in [-1, 1] with lower <= upper");
  }
  ReadValueRange(r, &l->range_lo_, &l->range_hi_);
  l->ReadSeed(config);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

void RandomBrightness::Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
                               float* out) const {
  const double delta = rng.Uniform(lower_, upper_) * (range_hi_ - range_lo_);
  for (int64_t p = 0; p < h * w * c; ++p) {
    out[p] = static_cast<float>(std::clamp(in[p] + delta, range_lo_, range_hi_));
  }
}

void RandomBrightness::AddConfig(nlohmann::json& c) const {
  c["factor"] = {lower_, upper_};
  c["value_range"] = {range_lo_, range_hi_};
}

// ---- RandomCrop

Result<std::unique_ptr<Layer>> RandomCrop::FromConfig(const std::string& name,
                                                      const nlohmann::json& config) {
  std::unique_ptr<RandomCrop> l(new RandomCrop(name));
  ConfigReader r(config);
  l->height_ = r.RequiredInt("height");
  l->width_ = r.RequiredInt("width");
  if (r.status().ok() && (l->height_ <= 0 || l->width_ <= 0)) {
    r.Fail("height", "and width must be positive");
  }
  r.ExpectOneOf("data_format", {"channels_last"});
  l->ReadSeed(config);
  EDL_RETURN_IF_ERROR(r.status());
  EDL_ASSIGN_OR_RETURN(
      l->resize_, Resizing::FromConfig(name + "/smart_resize", {{"height", l->height_},
                                                                {"width", l->width_},
                                                                {"crop_to_aspect_ratio", true}}));
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> RandomCrop::OutputShapes(const std::vector<Shape>& in) {
  EDL_ASSIGN_OR_RETURN(std::vector<Shape> shapes, RandomAugmentation::OutputShapes(in));
  return std::vector<Shape>{{height_, width_, shapes[0][2]}};
}

std::vector<Var> RandomCrop::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Shape& s = inputs[0].shape();
  if (!ctx.training || s[1] < height_ || s[2] < width_) return {Infer(inputs[0])};
  return RandomAugmentation::Call(inputs, ctx);
}

Var RandomCrop::Infer(const Var& x) {
  if (!resize_->built()) {
    std::mt19937_64 unused;
    const Shape& s = x.shape();
    auto built = resize_->Build({{s[1], s[2], s[3]}}, unused);
    EDL_CHECK(built.ok()) << built.status().ToString();
  }
  return resize_->Call({x}, CallContext{})[0];
}

void RandomCrop::Augment(AugmentRng& rng, const float* in, int64_t h, int64_t w, int64_t c,
                         float* out) const {
  const auto top = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(h - height_ + 1));
  const auto left = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(w - width_ + 1));
  for (int64_t y = 0; y < height_; ++y) {
    std::copy_n(in + ((top + y) * w + left) * c, width_ * c, out + y * width_ * c);
  }
}

void RandomCrop::AddConfig(nlohmann::json& c) const {
  c["height"] = height_;
  c["width"] = width_;
}

}  // namespace edl::nn::layers
