// Keras initializers (keras/initializers/initializers.py). Truncated normals
// redraw values more than two standard deviations from the mean, as
// tf.random.truncated_normal.
#include "nn/initializers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/keras_object.h"

namespace edl::nn {
namespace {

using tensor::Shape;
using tensor::Tensor;

struct KnownInitializer {
  const char* canonical;  // internal::CanonicalName form
  const char* name;       // InitializerOptions::name
};

constexpr KnownInitializer kKnown[] = {
    {"glorotuniform", "glorot_uniform"},
    {"glorotnormal", "glorot_normal"},
    {"henormal", "he_normal"},
    {"heuniform", "he_uniform"},
    {"lecunnormal", "lecun_normal"},
    {"lecununiform", "lecun_uniform"},
    {"variancescaling", "variance_scaling"},
    {"zeros", "zeros"},
    {"zero", "zeros"},
    {"ones", "ones"},
    {"one", "ones"},
    {"constant", "constant"},
    {"randomnormal", "random_normal"},
    {"normal", "random_normal"},
    {"randomuniform", "random_uniform"},
    {"uniform", "random_uniform"},
    {"truncatednormal", "truncated_normal"},
    {"orthogonal", "orthogonal"},
    {"identity", "identity"},
};

// A variance_scaling initializer's fixed parameters, for the named presets.
bool Preset(const std::string& name, InitializerOptions* o) {
  struct P {
    const char* name;
    double scale;
    const char* mode;
    const char* distribution;
  };
  static constexpr P kPresets[] = {
      {"glorot_uniform", 1, "fan_avg", "uniform"},
      {"glorot_normal", 1, "fan_avg", "truncated_normal"},
      {"he_normal", 2, "fan_in", "truncated_normal"},
      {"he_uniform", 2, "fan_in", "uniform"},
      {"lecun_normal", 1, "fan_in", "truncated_normal"},
      {"lecun_uniform", 1, "fan_in", "uniform"},
  };
  for (const P& p : kPresets) {
    if (name == p.name) {
      o->scale = p.scale;
      o->mode = p.mode;
      o->distribution = p.distribution;
      return true;
    }
  }
  return false;
}

template <typename G>
double TruncatedNormal(G& rng, double mean, double stddev) {
  std::normal_distribution<double> normal(0.0, 1.0);
  double z;
  do {
    z = normal(rng);
  } while (std::abs(z) > 2.0);
  return mean + stddev * z;
}

template <typename G>
void FillVarianceScaling(const InitializerOptions& o, const Shape& shape, G& rng, float* out,
                         int64_t n) {
  const Fans fans = ComputeFans(shape);
  double fan = fans.fan_in;
  if (o.mode == "fan_out") fan = fans.fan_out;
  if (o.mode == "fan_avg") fan = (fans.fan_in + fans.fan_out) / 2;
  const double scale = o.scale / std::max(1.0, fan);
  if (o.distribution == "uniform") {
    const double limit = std::sqrt(3.0 * scale);
    std::uniform_real_distribution<double> u(-limit, limit);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(u(rng));
  } else if (o.distribution == "untruncated_normal") {
    std::normal_distribution<double> normal(0.0, std::sqrt(scale));
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(normal(rng));
  } else {
    EDL_CHECK(o.distribution == "truncated_normal" || o.distribution == "normal")
        << "distribution " << o.distribution;
    // The stddev of a unit normal truncated at +-2.
    const double stddev = std::sqrt(scale) / 0.87962566103423978;
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<float>(TruncatedNormal(rng, 0.0, stddev));
    }
  }
}

// gain * Q of a random normal matrix's QR decomposition, sign-fixed so that
// R has a positive diagonal (modified Gram-Schmidt gives exactly that).
template <typename G>
void FillOrthogonal(const InitializerOptions& o, const Shape& shape, G& rng, float* out,
                    int64_t n) {
  EDL_CHECK_GE(shape.size(), 2u) << "orthogonal needs a rank >= 2 shape";
  const int64_t cols_total = shape.back();
  const int64_t rows_total = n / cols_total;
  const int64_t rows = std::max(rows_total, cols_total);
  const int64_t cols = std::min(rows_total, cols_total);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> a(rows * cols);  // column-major: a[c * rows + r]
  for (double& v : a) v = normal(rng);
  for (int64_t c = 0; c < cols; ++c) {
    double* col = &a[c * rows];
    for (int64_t p = 0; p < c; ++p) {
      const double* q = &a[p * rows];
      double dot = 0;
      for (int64_t r = 0; r < rows; ++r) dot += q[r] * col[r];
      for (int64_t r = 0; r < rows; ++r) col[r] -= dot * q[r];
    }
    double norm = 0;
    for (int64_t r = 0; r < rows; ++r) norm += col[r] * col[r];
    norm = std::sqrt(norm);
    for (int64_t r = 0; r < rows; ++r) col[r] /= norm;
  }
  // Q is [rows, cols]; the output [rows_total, cols_total] is Q or Q^T.
  for (int64_t i = 0; i < rows_total; ++i) {
    for (int64_t j = 0; j < cols_total; ++j) {
      const double q = rows_total >= cols_total ? a[j * rows + i] : a[i * rows + j];
      out[i * cols_total + j] = static_cast<float>(o.gain * q);
    }
  }
}

Status ReadSeed(internal::KerasObject& o, InitializerOptions* options) {
  double seed = NAN;
  EDL_RETURN_IF_ERROR(o.Get("seed", &seed));
  if (!std::isnan(seed)) {
    if (seed != std::floor(seed)) return o.FieldError("seed", "expected an integer");
    options->seed = static_cast<int64_t>(seed);
  }
  return Status::Ok();
}

template <typename G>
void Fill(const InitializerOptions& options, const Shape& shape, G& rng, float* out) {
  const int64_t n = tensor::NumElements(shape);
  const std::string& name = options.name;
  InitializerOptions vs = options;
  if (name == "variance_scaling" || Preset(name, &vs)) {
    FillVarianceScaling(vs, shape, rng, out, n);
  } else if (name == "zeros" || name == "ones" || name == "constant") {
    const float v = name == "zeros" ? 0.f : name == "ones" ? 1.f : float(options.value);
    std::fill(out, out + n, v);
  } else if (name == "random_normal") {
    std::normal_distribution<double> normal(options.mean, options.stddev);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(normal(rng));
  } else if (name == "truncated_normal") {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<float>(TruncatedNormal(rng, options.mean, options.stddev));
    }
  } else if (name == "random_uniform") {
    std::uniform_real_distribution<double> u(options.minval, options.maxval);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(u(rng));
  } else if (name == "orthogonal") {
    FillOrthogonal(options, shape, rng, out, n);
  } else if (name == "identity") {
    EDL_CHECK_EQ(shape.size(), 2u) << "identity initializer needs a 2-D shape";
    std::fill(out, out + n, 0.f);
    for (int64_t i = 0; i < std::min(shape[0], shape[1]); ++i) {
      out[i * shape[1] + i] = static_cast<float>(options.gain);
    }
  } else {
    EDL_CHECK(false) << "unknown initializer " << name;
  }
}

}  // namespace

Fans ComputeFans(const Shape& shape) {
  if (shape.empty()) return {1, 1};
  if (shape.size() == 1) return {double(shape[0]), double(shape[0])};
  if (shape.size() == 2) return {double(shape[0]), double(shape[1])};
  double receptive = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= shape[i];
  return {shape[shape.size() - 2] * receptive, shape.back() * receptive};
}

Result<InitializerOptions> InitializerFromJson(const std::string& json_text,
                                               const std::string& where) {
  EDL_ASSIGN_OR_RETURN(internal::KerasObject o, internal::KerasObject::Parse(json_text, where));
  const KnownInitializer* known = nullptr;
  for (const KnownInitializer& k : kKnown) {
    if (o.canonical() == k.canonical) known = &k;
  }
  if (known == nullptr) {
    return InvalidArgument(where + ": unknown initializer \"" + o.class_name() +
                           "\" (known: glorot_uniform, glorot_normal, he_normal, "
                           "he_uniform, lecun_normal, lecun_uniform, "
                           "variance_scaling, zeros, ones, constant, random_normal, "
                           "random_uniform, truncated_normal, orthogonal, identity)");
  }
  InitializerOptions options;
  options.name = known->name;
  o.Ignore({"dtype"});
  const std::string& name = options.name;
  if (Preset(name, &options)) {
    EDL_RETURN_IF_ERROR(ReadSeed(o, &options));
  } else if (name == "variance_scaling") {
    EDL_RETURN_IF_ERROR(o.Get("scale", &options.scale));
    EDL_RETURN_IF_ERROR(o.Get("mode", &options.mode));
    EDL_RETURN_IF_ERROR(o.Get("distribution", &options.distribution));
    EDL_RETURN_IF_ERROR(ReadSeed(o, &options));
    if (!(options.scale > 0)) return o.FieldError("scale", "must be positive");
    if (options.mode != "fan_in" && options.mode != "fan_out" && options.mode != "fan_avg") {
      return o.FieldError("mode",
                          "must be fan_in, fan_out or fan_avg, got \"" + options.mode + "\"");
    }
    if (options.distribution == "normal") options.distribution = "truncated_normal";
    if (options.distribution != "truncated_normal" &&
        options.distribution != "untruncated_normal" && options.distribution != "uniform") {
      return o.FieldError("distribution",
                          "must be truncated_normal, untruncated_normal or uniform, "
                          "got \"" +
                              options.distribution + "\"");
    }
  } else if (name == "constant") {
    EDL_RETURN_IF_ERROR(o.Get("value", &options.value));
  } else if (name == "random_normal" || name == "truncated_normal") {
    EDL_RETURN_IF_ERROR(o.Get("mean", &options.mean));
    EDL_RETURN_IF_ERROR(o.Get("stddev", &options.stddev));
    EDL_RETURN_IF_ERROR(ReadSeed(o, &options));
    if (!(options.stddev >= 0)) return o.FieldError("stddev", "must be >= 0");
  } else if (name == "random_uniform") {
    EDL_RETURN_IF_ERROR(o.Get("minval", &options.minval));
    EDL_RETURN_IF_ERROR(o.Get("maxval", &options.maxval));
    EDL_RETURN_IF_ERROR(ReadSeed(o, &options));
    if (!(options.minval <= options.maxval)) {
      return o.FieldError("maxval", "must be >= minval");
    }
  } else if (name == "orthogonal" || name == "identity") {
    EDL_RETURN_IF_ERROR(o.Get("gain", &options.gain));
    if (name == "orthogonal") EDL_RETURN_IF_ERROR(ReadSeed(o, &options));
  }
  EDL_RETURN_IF_ERROR(o.CheckAllFieldsUsed());
  return options;
}

Tensor Initialize(const InitializerOptions& options, const Shape& shape, std::mt19937_64& rng) {
  Tensor t = Tensor::Empty(shape);
  Fill(options, shape, rng, t.f32());
  return t;
}

void InitializeInto(const InitializerOptions& options, const Shape& shape, SplitMix64Rng& rng,
                    float* out) {
  Fill(options, shape, rng, out);
}

}  // namespace edl::nn
