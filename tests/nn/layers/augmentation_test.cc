// Keras' random augmentation layers: exact results where the draw is
// pinned (a factor [f, f]) worked out by hand from Keras' transform
// matrices and TensorFlow's ImageProjectiveTransformV3 sampling; the
// distributions of the draws over many records; the identity at
// inference; the same augmentation for the same record key.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "nn/layers/affine_augmentation.h"
#include "nn/layers/layer_factory.h"
#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using layer_testing::BuiltLayer;
using layer_testing::LayerError;
using nlohmann::json;

// Runs the layer in training on `x` [n, h, w, c] with record keys k0.. .
std::vector<float> Train(Layer& l, const Tensor& x, uint64_t first_key = 1) {
  std::vector<uint64_t> keys;
  for (int64_t i = 0; i < x.dim(0); ++i) keys.push_back(AugmentationKey(7, 0, first_key + i));
  std::mt19937_64 rng(1);
  CallContext ctx{true, &rng, &keys};
  return l.Call({Var(x)}, ctx)[0].value().ToVector();
}

Tensor Image(int64_t h, int64_t w, std::vector<float> v) {
  return Tensor::FromVector({1, h, w, 1}, std::move(v));
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "value " << i;
}

TEST(RandomRotation, AQuarterTurnIsNumpysRot90) {
  // Keras' matrix for pi/2 on 3 x 3: input x = 2 - y, input y = x.
  const Tensor x = Image(3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto nearest = BuiltLayer("RandomRotation",
                            {{"factor", {0.25, 0.25}}, {"interpolation", "nearest"}}, {{3, 3, 1}});
  EXPECT_EQ(Train(*nearest, x), std::vector<float>({3, 6, 9, 2, 5, 8, 1, 4, 7}));
  auto bilinear = BuiltLayer("RandomRotation", {{"factor", {0.25, 0.25}}}, {{3, 3, 1}});
  ExpectNear(Train(*bilinear, x), {3, 6, 9, 2, 5, 8, 1, 4, 7});
}

TEST(RandomZoom, ZoomingInSamplesTheCentreAtHalfSteps) {
  // Zoom 0.5 (factor -0.5) on width 4: input x = 0.5 x + 1.5 * 0.5.
  auto l = BuiltLayer("RandomZoom", {{"height_factor", {-0.5, -0.5}}}, {{1, 4, 1}});
  ExpectNear(Train(*l, Image(1, 4, {0, 10, 20, 30})), {7.5, 12.5, 17.5, 22.5});
  // Zooming out by 2 with a constant fill: input x = 2 x - 1.5.
  auto out =
      BuiltLayer("RandomZoom",
                 {{"height_factor", {1.0, 1.0}}, {"fill_mode", "constant"}, {"fill_value", -1.0}},
                 {{1, 4, 1}});
  // x = -1.5 (fill), 0.5 (between 0 and 10, with a fill neighbour row below
  // weighted 0), 2.5, 4.5 (fill).
  ExpectNear(Train(*out, Image(1, 4, {0, 10, 20, 30})), {-1, 5, 25, -1});
}

TEST(RandomTranslation, ShiftsByTheFactorTimesTheSizeAndFillsByTheMode) {
  const Tensor x = Image(1, 4, {0, 10, 20, 30});
  auto shifted = [&](const std::string& fill, double factor) {
    auto l = BuiltLayer("RandomTranslation",
                        {{"height_factor", 0.0},
                         {"width_factor", {factor, factor}},
                         {"fill_mode", fill},
                         {"fill_value", -5.0}},
                        {{1, 4, 1}});
    return Train(*l, x);
  };
  // One pixel right: input x = x - 1; x = -1 is filled.
  ExpectNear(shifted("constant", 0.25), {-5, 0, 10, 20});
  ExpectNear(shifted("reflect", 0.25), {0, 0, 10, 20});  // dcba|abcd: -1 -> 0
  ExpectNear(shifted("wrap", 0.25), {30, 0, 10, 20});    // abcd|abcd: -1 -> 3
  ExpectNear(shifted("nearest", 0.25), {0, 0, 10, 20});
  // 1.5 pixels: TensorFlow reflects -1.5 to 0.5 and -0.5 to -0.5, clamped to 0.
  ExpectNear(shifted("reflect", 0.375), {5, 0, 5, 15});
  // One pixel left: x = 4 reflects to 3 (abcd|dcba).
  ExpectNear(shifted("reflect", -0.25), {10, 20, 30, 30});
}

TEST(RandomFlip, FlipsAboutHalfTheRecordsAndOnlyFlips) {
  auto l = BuiltLayer("RandomFlip", {{"mode", "horizontal"}}, {{1, 3, 1}});
  const int n = 1000;
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.insert(v.end(), {1, 2, 3});
  const auto out = Train(*l, Tensor::FromVector({n, 1, 3, 1}, v));
  int flipped = 0;
  for (int i = 0; i < n; ++i) {
    const std::vector<float> r(out.begin() + 3 * i, out.begin() + 3 * i + 3);
    ASSERT_TRUE(r == std::vector<float>({1, 2, 3}) || r == std::vector<float>({3, 2, 1}));
    flipped += r[0] == 3;
  }
  // Binomial(1000, 1/2): sd 15.8; 5 sd either side.
  EXPECT_NEAR(flipped, 500, 80);
  auto both = BuiltLayer("RandomFlip", json::object(), {{2, 2, 1}});
  std::set<std::vector<float>> seen;
  std::vector<float> w;
  for (int i = 0; i < 64; ++i) w.insert(w.end(), {1, 2, 3, 4});
  const auto outs = Train(*both, Tensor::FromVector({64, 2, 2, 1}, w));
  for (int i = 0; i < 64; ++i) seen.insert({outs.begin() + 4 * i, outs.begin() + 4 * i + 4});
  EXPECT_EQ(seen.size(), 4u);  // none, left-right, up-down, both
}

TEST(RandomContrast, ScalesAboutEachChannelsMeanByAFactorFromItsRangeAndClips) {
  auto l = BuiltLayer("RandomContrast", {{"factor", 0.5}}, {{1, 2, 1}});
  const int n = 2000;
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.insert(v.end(), {0, 100});
  const auto out = Train(*l, Tensor::FromVector({n, 1, 2, 1}, v));
  double sum = 0, lo = 9, hi = 0;
  for (int i = 0; i < n; ++i) {
    const double c = (out[2 * i + 1] - 50) / 50;                // (x - mean) * c + mean
    ASSERT_NEAR(out[2 * i], std::max(0.0, 50 - 50 * c), 1e-3);  // clipped at 0
    sum += c;
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  // U(0.5, 1.5): mean 1 (sd of the mean 0.0065), the ends nearly reached.
  EXPECT_NEAR(sum / n, 1.0, 0.03);
  EXPECT_LT(lo, 0.51);
  EXPECT_GT(hi, 1.49);
  EXPECT_GE(lo, 0.5);
  EXPECT_LE(hi, 1.5);
  auto clipped =
      BuiltLayer("RandomContrast", {{"factor", {0.0, 1.0}}, {"value_range", {0, 60}}}, {{1, 2, 1}});
  for (float o : Train(*clipped, Tensor::FromVector({50, 1, 2, 1}, std::vector<float>(100, 0.f))))
    ASSERT_EQ(o, 0.f);
  const auto c2 = Train(*clipped, Tensor::FromVector({1, 1, 2, 1}, {0, 100}));
  EXPECT_LE(c2[1], 60.f);
}

TEST(RandomBrightness, AddsAShareOfTheValueRangeAndClips) {
  auto l = BuiltLayer("RandomBrightness", {{"factor", 0.2}}, {{1, 1, 1}});
  const int n = 2000;
  const auto out = Train(*l, Tensor::FromVector({n, 1, 1, 1}, std::vector<float>(n, 100.f)));
  double sum = 0, lo = 1e9, hi = -1e9;
  for (float o : out) {
    sum += o - 100;
    lo = std::min<double>(lo, o - 100);
    hi = std::max<double>(hi, o - 100);
  }
  // U(-0.2, 0.2) * 255: within +-51, mean 0 (sd of the mean 0.66).
  EXPECT_NEAR(sum / n, 0, 3.5);
  EXPECT_GE(lo, -51.0001);
  EXPECT_LE(hi, 51.0001);
  EXPECT_LT(lo, -50);
  EXPECT_GT(hi, 50);
  const auto bright = Train(*l, Tensor::FromVector({n, 1, 1, 1}, std::vector<float>(n, 250.f)));
  EXPECT_EQ(*std::max_element(bright.begin(), bright.end()), 255.f);
}

TEST(RandomCrop, CutsEveryWindowAtRandomAndSmartResizesAtInference) {
  auto l = BuiltLayer("RandomCrop", {{"height", 2}, {"width", 2}}, {{3, 4, 1}});
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  std::vector<float> all;
  for (int i = 0; i < 200; ++i) all.insert(all.end(), v.begin(), v.end());
  const auto out = Train(*l, Tensor::FromVector({200, 3, 4, 1}, all));
  std::set<float> corners;
  for (int i = 0; i < 200; ++i) {
    const float* r = out.data() + 4 * i;
    ASSERT_EQ(r[1], r[0] + 1);  // a 2 x 2 window of rows of 4
    ASSERT_EQ(r[2], r[0] + 4);
    corners.insert(r[0]);
  }
  EXPECT_EQ(corners, std::set<float>({0, 1, 2, 4, 5, 6}));  // 2 x 3 offsets
  // Inference: the centred 3 x 3 window (columns 0..2, as int((4 - 3) / 2)
  // = 0) resized to 2 x 2.
  const auto inferred = l->Call({Var(Tensor::FromVector({1, 3, 4, 1}, v))}, {})[0].value();
  EXPECT_EQ(inferred.shape(), Shape({1, 2, 2, 1}));
}

TEST(RandomAugmentation, IsTheIdentityAtInferenceAndRepeatsForTheSameKey) {
  const std::vector<std::pair<std::string, json>> layers = {
      {"RandomFlip", json::object()},
      {"RandomRotation", {{"factor", 0.2}}},
      {"RandomZoom", {{"height_factor", 0.3}, {"width_factor", 0.1}}},
      {"RandomTranslation", {{"height_factor", 0.2}, {"width_factor", 0.2}}},
      {"RandomContrast", {{"factor", 0.4}}},
      {"RandomBrightness", {{"factor", 0.3}}},
  };
  std::vector<float> v(4 * 5 * 6 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 251);
  const Tensor x = Tensor::FromVector({4, 5, 6, 3}, v);
  for (const auto& [cls, config] : layers) {
    auto l = BuiltLayer(cls, config, {{5, 6, 3}});
    EXPECT_EQ(l->Call({Var(x)}, {})[0].value().ToVector(), v) << cls << " at inference";
    const auto a = Train(*l, x, 10), b = Train(*l, x, 10), other = Train(*l, x, 20);
    EXPECT_EQ(a, b) << cls << ": the same keys draw the same";
    EXPECT_NE(a, other) << cls << ": other keys draw anew";
    EXPECT_NE(a, v) << cls << " changes something in training";
  }
}

TEST(RandomAugmentation, KerasTwoAndThreeConfigsLoadAndBadOnesAreRefused) {
  // Keras 3 saves data_format, value_range and seed fields.
  EXPECT_EQ(LayerError("RandomFlip",
                       {{"mode", "horizontal"}, {"seed", 3}, {"data_format", "channels_last"}},
                       {{4, 4, 3}}),
            "OK");
  EXPECT_EQ(LayerError("RandomRotation",
                       {{"factor", {-0.1, 0.2}},
                        {"fill_mode", "constant"},
                        {"interpolation", "nearest"},
                        {"seed", nullptr},
                        {"fill_value", 0.0},
                        {"value_range", {0, 255}},
                        {"data_format", "channels_last"}},
                       {{4, 4, 3}}),
            "OK");
  EXPECT_EQ(LayerError("RandomContrast", {{"factor", 0.2}, {"value_range", {0, 1}}}, {{4, 4, 3}}),
            "OK");
  EXPECT_NE(LayerError("RandomFlip", {{"mode", "diagonal"}}, {{4, 4, 3}}).find("mode must be"),
            std::string::npos);
  EXPECT_NE(LayerError("RandomRotation", json::object(), {{4, 4, 3}}).find("factor is required"),
            std::string::npos);
  EXPECT_NE(LayerError("RandomRotation", {{"factor", "x"}}, {{4, 4, 3}}).find("factor must be"),
            std::string::npos);
  EXPECT_NE(LayerError("RandomRotation", {{"factor", 0.1}, {"fill_mode", "mirror"}}, {{4, 4, 3}})
                .find("fill_mode must be"),
            std::string::npos);
  EXPECT_NE(LayerError("RandomContrast", {{"factor", 1.5}}, {{4, 4, 3}}).find("factor must be"),
            std::string::npos);
  EXPECT_NE(LayerError("RandomTranslation", {{"height_factor", 0.1}}, {{4, 4, 3}})
                .find("width_factor is required"),
            std::string::npos);
  EXPECT_NE(LayerError("RandomFlip", json::object(), {{16}}).find("expects rank-3"),
            std::string::npos);
  EXPECT_NE(LayerError("RandomBrightness", {{"factor", 0.1}, {"value_range", {5, 1}}}, {{2, 2, 1}})
                .find("value_range must be"),
            std::string::npos);
}

}  // namespace
}  // namespace edl::nn::layers
