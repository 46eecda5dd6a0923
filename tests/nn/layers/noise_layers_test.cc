// SpatialDropout1D/2D, GaussianNoise, GaussianDropout and AlphaDropout:
// the input unchanged at inference; in training the noise each promises
// (channels dropped whole; mean and spread of the noise; AlphaDropout
// keeping a standard normal input's mean and variance); gradients; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "nn/layers/layer_factory.h"
#include "tests/nn/gradient_check.h"
#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using nlohmann::json;
using testing::ExpectGradientsMatch;
using testing::RandomTensor;

std::unique_ptr<Layer> Built(const std::string& cls, const json& config, const Shape& in) {
  return layer_testing::BuiltLayer(cls, config, {in});
}

std::string Error(const std::string& cls, const json& config, const Shape& in) {
  return layer_testing::LayerError(cls, config, {in});
}

std::vector<float> Train(Layer& l, const Tensor& x, uint64_t seed = 3) {
  std::mt19937_64 rng(seed);
  CallContext ctx;
  ctx.training = true;
  ctx.rng = &rng;
  return l.Call({Var(x)}, ctx)[0].value().ToVector();
}

// Mean and standard deviation.
std::pair<double, double> Moments(const std::vector<double>& v) {
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return {m, std::sqrt(s / static_cast<double>(v.size()))};
}

TEST(NoiseLayers, PassTheirInputUnchangedAtInference) {
  std::mt19937_64 rng(1);
  const Tensor x = RandomTensor({2, 3, 4, 5}, rng);
  for (const auto& [cls, config] :
       std::vector<std::pair<std::string, json>>{{"SpatialDropout2D", {{"rate", 0.5}}},
                                                 {"GaussianNoise", {{"stddev", 1.0}}},
                                                 {"GaussianDropout", {{"rate", 0.5}}},
                                                 {"AlphaDropout", {{"rate", 0.5}}}}) {
    auto l = Built(cls, config, {3, 4, 5});
    EXPECT_EQ(l->Call({Var(x)}, {})[0].value().ToVector(), x.ToVector()) << cls;
  }
}

TEST(NoiseLayers, SpatialDropoutDropsWholeChannelsOfASample) {
  const Tensor x = Tensor::Full({8, 3, 3, 50}, 1.f);
  auto l = Built("SpatialDropout2D", {{"rate", 0.25}}, {3, 3, 50});
  const std::vector<float> y = Train(*l, x);
  int dropped = 0;
  for (int b = 0; b < 8; ++b) {
    for (int c = 0; c < 50; ++c) {
      const float first = y[static_cast<size_t>(b * 450 + c)];
      EXPECT_TRUE(first == 0.f || std::abs(first - 1.f / 0.75f) < 1e-6) << first;
      for (int p = 1; p < 9; ++p) ASSERT_EQ(y[static_cast<size_t>(b * 450 + p * 50 + c)], first);
      dropped += first == 0.f;
    }
  }
  EXPECT_NEAR(dropped / 400.0, 0.25, 0.07);
  auto one_d = Built("SpatialDropout1D", {{"rate", 0.5}}, {4, 6});
  const std::vector<float> z = Train(*one_d, Tensor::Full({2, 4, 6}, 1.f));
  for (int b = 0; b < 2; ++b) {
    for (int c = 0; c < 6; ++c) {
      for (int s = 1; s < 4; ++s) EXPECT_EQ(z[b * 24 + s * 6 + c], z[b * 24 + c]);
    }
  }
}

TEST(NoiseLayers, GaussianNoiseAndDropoutHaveTheirSpread) {
  std::mt19937_64 rng(2);
  const Tensor x = RandomTensor({100, 200}, rng, 0.5f, 2.f);
  const std::vector<float> noisy = Train(*Built("GaussianNoise", {{"stddev", 0.3}}, {200}), x);
  const std::vector<float> scaled = Train(*Built("GaussianDropout", {{"rate", 0.2}}, {200}), x);
  std::vector<double> added, factor;
  for (int64_t i = 0; i < x.numel(); ++i) {
    added.push_back(noisy[i] - x.f32()[i]);
    factor.push_back(scaled[i] / x.f32()[i]);
  }
  auto [m1, s1] = Moments(added);
  EXPECT_NEAR(m1, 0, 0.01);
  EXPECT_NEAR(s1, 0.3, 0.01);
  auto [m2, s2] = Moments(factor);
  EXPECT_NEAR(m2, 1, 0.01);
  EXPECT_NEAR(s2, std::sqrt(0.2 / 0.8), 0.01);
}

TEST(NoiseLayers, AlphaDropoutKeepsAStandardNormalInputsMeanAndVariance) {
  std::mt19937_64 rng(4);
  Tensor x = Tensor::Empty({200, 500});
  std::normal_distribution<float> n(0.f, 1.f);
  for (int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = n(rng);
  const std::vector<float> y = Train(*Built("AlphaDropout", {{"rate", 0.2}}, {500}), x);
  auto [m, s] = Moments(std::vector<double>(y.begin(), y.end()));
  EXPECT_NEAR(m, 0, 0.02);
  EXPECT_NEAR(s, 1, 0.02);
}

TEST(NoiseLayers, GradientsAreTheNoisesOwn) {
  std::mt19937_64 rng(5);
  for (const auto& [cls, config, shape] : std::vector<std::tuple<std::string, json, Shape>>{
           {"SpatialDropout1D", {{"rate", 0.4}}, {3, 4}},
           {"GaussianNoise", {{"stddev", 0.5}}, {6}},
           {"GaussianDropout", {{"rate", 0.3}}, {6}},
           {"AlphaDropout", {{"rate", 0.3}}, {6}}}) {
    SCOPED_TRACE(cls);
    auto l = Built(cls, config, shape);
    Shape batched = shape;
    batched.insert(batched.begin(), 2);
    ExpectGradientsMatch(
        [&](const std::vector<Var>& v) {
          std::mt19937_64 same(11);  // the same noise in every evaluation
          CallContext ctx;
          ctx.training = true;
          ctx.rng = &same;
          return l->Call(v, ctx)[0];
        },
        {RandomTensor(batched, rng)});
  }
}

TEST(NoiseLayers, RefuseBadRatesAndShapesNamingThem) {
  EXPECT_EQ(Error("GaussianDropout", json::object(), {3}), "rate is required");
  EXPECT_EQ(Error("AlphaDropout", {{"rate", 1.0}}, {3}), "rate must be in [0, 1), got 1.000000");
  EXPECT_EQ(Error("GaussianNoise", {{"stddev", -1}}, {3}), "stddev must be >= 0");
  EXPECT_EQ(Error("SpatialDropout1D", {{"rate", 0.1}}, {3}),
            "layer \"l\" (SpatialDropout1D): expects rank-2 input [steps, channels], got [3]");
  EXPECT_NE(
      Error("AlphaDropout", {{"rate", 0.1}, {"noise_shape", {1, 3}}}, {3}).find("noise_shape"),
      std::string::npos);
}

}  // namespace
}  // namespace edl::nn::layers
