#include "nn/initializers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace edl::nn {
namespace {

using tensor::Shape;
using tensor::Tensor;

struct Stats {
  double mean, stddev, min, max;
};

Stats Measure(const Tensor& t) {
  double s = 0, s2 = 0, lo = 1e30, hi = -1e30;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.f32()[i];
    s += v;
    s2 += v * v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double mean = s / t.numel();
  return {mean, std::sqrt(s2 / t.numel() - mean * mean), lo, hi};
}

InitializerOptions Parse(const std::string& json) {
  auto o = InitializerFromJson(json, "layers[0].kernel_initializer");
  EXPECT_TRUE(o.ok()) << json << ": " << o.status().message();
  return o.ok() ? *o : InitializerOptions{};
}

TEST(ComputeFans, FollowsKerasForDenseConvAndVectorShapes) {
  EXPECT_EQ(ComputeFans({7}).fan_in, 7);
  EXPECT_EQ(ComputeFans({7}).fan_out, 7);
  EXPECT_EQ(ComputeFans({3, 5}).fan_in, 3);
  EXPECT_EQ(ComputeFans({3, 5}).fan_out, 5);
  EXPECT_EQ(ComputeFans({3, 3, 16, 32}).fan_in, 9 * 16);
  EXPECT_EQ(ComputeFans({3, 3, 16, 32}).fan_out, 9 * 32);
  EXPECT_EQ(ComputeFans({}).fan_in, 1);
}

struct StatCase {
  std::string json;
  Shape shape;
  double stddev;  // expected by the Keras formula
  double bound;   // largest |value| allowed (0: unbounded)
};

class InitializerStatistics : public ::testing::TestWithParam<StatCase> {};

void ExpectStatistics(const StatCase& c, const Tensor& t) {
  const Stats s = Measure(t);
  EXPECT_NEAR(s.mean, 0.0, 0.05 * c.stddev + 1e-3);
  EXPECT_NEAR(s.stddev, c.stddev, 0.04 * c.stddev);
  if (c.bound > 0) {
    EXPECT_LE(s.max, c.bound);
    EXPECT_GE(s.min, -c.bound);
    EXPECT_GT(s.max, 0.9 * c.bound);  // really uses the whole range
  }
}

TEST_P(InitializerStatistics, MatchTheKerasFormula) {
  const StatCase c = GetParam();
  std::mt19937_64 rng(123);
  Tensor t = Initialize(Parse(c.json), c.shape, rng);
  ASSERT_EQ(t.shape(), c.shape);
  ExpectStatistics(c, t);
}

// The same draws from a SplitMix64 stream, into caller memory.
TEST_P(InitializerStatistics, MatchTheKerasFormulaFromASplitMixStream) {
  const StatCase c = GetParam();
  SplitMix64Rng rng(123);
  Tensor t = Tensor::Full(c.shape, 1e9f);
  InitializeInto(Parse(c.json), c.shape, rng, t.f32());
  ExpectStatistics(c, t);
}

INSTANTIATE_TEST_SUITE_P(
    KerasInitializers, InitializerStatistics,
    ::testing::Values(
        // uniform limit sqrt(3 * scale / fan): stddev = limit / sqrt(3).
        StatCase{R"("glorot_uniform")", {200, 300}, std::sqrt(2.0 / 500), std::sqrt(6.0 / 500)},
        StatCase{R"({"class_name": "GlorotNormal", "config": {"seed": null}})",
                 {200, 300},
                 std::sqrt(2.0 / 500),
                 2 * std::sqrt(2.0 / 500) / 0.87962566103423978},
        StatCase{R"("he_normal")",
                 {3, 3, 16, 64},
                 std::sqrt(2.0 / 144),
                 2 * std::sqrt(2.0 / 144) / 0.87962566103423978},
        StatCase{R"("HeUniform")", {3, 3, 16, 64}, std::sqrt(2.0 / 144), std::sqrt(6.0 / 144)},
        StatCase{R"("lecun_normal")", {400, 100}, std::sqrt(1.0 / 400), 0},
        StatCase{R"({"class_name": "LecunUniform", "config": {"seed": 3}})",
                 {400, 100},
                 std::sqrt(1.0 / 400),
                 std::sqrt(3.0 / 400)},
        StatCase{R"({"class_name": "VarianceScaling", "config": {"scale": 3.0,
                   "mode": "fan_out", "distribution": "untruncated_normal"}})",
                 {100, 400},
                 std::sqrt(3.0 / 400),
                 0},
        StatCase{R"({"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 0.5}})",
                 {100, 100},
                 0.5,
                 0},
        StatCase{R"({"class_name": "TruncatedNormal", "config": {"stddev": 0.5}})",
                 {100, 100},
                 0.5 * 0.87962566103423978,
                 1.0},
        StatCase{R"({"class_name": "RandomUniform",
                   "config": {"minval": -0.3, "maxval": 0.3}})",
                 {100, 100},
                 0.3 / std::sqrt(3.0),
                 0.3}));

TEST(Initialize, FillsConstants) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(Initialize(Parse(R"("zeros")"), {3}, rng).ToVector(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(Initialize(Parse(R"("Ones")"), {2}, rng).ToVector(), (std::vector<float>{1, 1}));
  EXPECT_EQ(
      Initialize(Parse(R"({"class_name":"Constant","config":{"value":2.5}})"), {2}, rng).ToVector(),
      (std::vector<float>{2.5f, 2.5f}));
}

TEST(Initialize, OrthogonalGivesOrthonormalRowsOrColumns) {
  for (Shape shape : {Shape{6, 4}, Shape{4, 6}, Shape{2, 2, 3, 5}}) {
    std::mt19937_64 rng(5);
    Tensor t =
        Initialize(Parse(R"({"class_name":"Orthogonal","config":{"gain":2.0}})"), shape, rng);
    const int64_t cols = shape.back(), rows = t.numel() / cols;
    const bool by_cols = rows >= cols;
    const int64_t k = by_cols ? cols : rows, len = by_cols ? rows : cols;
    for (int64_t a = 0; a < k; ++a) {
      for (int64_t b = 0; b < k; ++b) {
        double dot = 0;
        for (int64_t i = 0; i < len; ++i) {
          const float x = by_cols ? t.f32()[i * cols + a] : t.f32()[a * cols + i];
          const float y = by_cols ? t.f32()[i * cols + b] : t.f32()[b * cols + i];
          dot += double(x) * y;
        }
        EXPECT_NEAR(dot, a == b ? 4.0 : 0.0, 1e-4);
      }
    }
  }
}

TEST(Initialize, SameRngSeedGivesTheSameTensor) {
  std::mt19937_64 a(9), b(9);
  InitializerOptions o;  // glorot_uniform by default
  EXPECT_EQ(Initialize(o, {4, 4}, a).ToVector(), Initialize(o, {4, 4}, b).ToVector());
}

TEST(InitializeInto, SameSeedGivesTheSameValuesAndOtherSeedsOthers) {
  InitializerOptions o;  // glorot_uniform by default
  std::vector<float> a(16), b(16), c(16);
  SplitMix64Rng ra(9), rb(9), rc(10);
  InitializeInto(o, {4, 4}, ra, a.data());
  InitializeInto(o, {4, 4}, rb, b.data());
  InitializeInto(o, {4, 4}, rc, c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(SplitMix64Rng, GivesTheReferenceSequence) {
  // SplitMix64 from seed 0 (Vigna's splitmix64.c): the first outputs.
  SplitMix64Rng rng(0);
  EXPECT_EQ(rng(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(rng(), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(rng(), 0x06c45d188009454full);
}

TEST(InitializerFromJson, ReadsSeedsAndKeras3Envelopes) {
  InitializerOptions o = Parse(
      R"({"module": "keras.initializers", "class_name": "GlorotUniform",
          "config": {"seed": 42}, "registered_name": null})");
  EXPECT_EQ(o.name, "glorot_uniform");
  ASSERT_TRUE(o.seed.has_value());
  EXPECT_EQ(*o.seed, 42);
  EXPECT_EQ(Parse(R"("random_normal")").name, "random_normal");
  EXPECT_EQ(Parse(R"("truncated_normal")").name, "truncated_normal");
  EXPECT_EQ(Parse(R"("variance_scaling")").mode, "fan_in");
}

TEST(InitializerFromJson, RejectsMalformedConfigsNamingTheField) {
  const std::string where = "model.json: layers[2] (Dense \"d\"): kernel_initializer";
  struct Case {
    std::string json, expected;
  } cases[] = {
      {R"("glorot_sideways")", "unknown initializer \"glorot_sideways\""},
      {R"({"class_name": "VarianceScaling", "config": {"mode": "fan_up"}})",
       "config.mode: must be fan_in, fan_out or fan_avg"},
      {R"({"class_name": "VarianceScaling", "config": {"distribution": "cauchy"}})",
       "config.distribution: must be"},
      {R"({"class_name": "VarianceScaling", "config": {"scale": -1}})",
       "config.scale: must be positive"},
      {R"({"class_name": "RandomNormal", "config": {"stddev": "wide"}})",
       "config.stddev: expected a number"},
      {R"({"class_name": "RandomUniform", "config": {"minval": 1, "maxval": 0}})",
       "config.maxval: must be >= minval"},
      {R"({"class_name": "GlorotUniform", "config": {"seed": 1.5}})",
       "config.seed: expected an integer"},
      {R"({"class_name": "Zeros", "config": {"value": 1}})", "config.value: unknown field"},
      {R"(["glorot_uniform"])", "expected a name"},
      {R"({"class_name": "GlorotUniform")", "not valid JSON"},
  };
  for (const Case& c : cases) {
    auto o = InitializerFromJson(c.json, where);
    ASSERT_FALSE(o.ok()) << c.json;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(o.status().message().rfind(where + ": " + c.expected, 0), 0u)
        << "got: " << o.status().message();
  }
}

}  // namespace
}  // namespace edl::nn
