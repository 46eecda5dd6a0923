// ZeroPadding2D, Cropping2D, UpSampling2D, RepeatVector and Rescaling: what
// they compute, their gradients, and config errors that name the field.
#include <gtest/gtest.h>

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

Tensor Count(const Shape& shape) {
  Tensor t = Tensor::Empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = static_cast<float>(i + 1);
  return t;
}

Tensor Apply(Layer& l, const Tensor& x) { return l.Call({Var(x)}, {})[0].value(); }

TEST(ZeroPadding2D, AddsZeroRowsAndColumnsAtEachEdge) {
  auto l = Built("ZeroPadding2D", {{"padding", {{1, 0}, {0, 2}}}}, {2, 2, 1});
  const Tensor y = Apply(*l, Count({1, 2, 2, 1}));
  EXPECT_EQ(y.shape(), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(y.ToVector(), (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  EXPECT_EQ(Apply(*Built("ZeroPadding2D", {}, {2, 2, 1}), Count({1, 2, 2, 1})).shape(),
            (Shape{1, 4, 4, 1}));
  EXPECT_EQ(l->Config()["padding"], json({{1, 0}, {0, 2}}));
  EXPECT_EQ(Error("ZeroPadding2D", {{"padding", -1}}, {2, 2, 1}),
            "padding must not be negative, got -1");
  EXPECT_EQ(Error("ZeroPadding2D", {{"padding", "1px"}}, {2, 2, 1}),
            "padding must be an integer, 2 integers or 2 pairs of integers, got \"1px\"");
  EXPECT_EQ(Error("ZeroPadding2D", {}, {4, 1}),
            "layer \"l\" (ZeroPadding2D): expects one rank-3 input [H, W, C], got [4, 1]");
}

TEST(Cropping2D, RemovesRowsAndColumnsAtEachEdge) {
  auto l = Built("Cropping2D", {{"cropping", {{1, 0}, {1, 2}}}}, {3, 4, 1});
  const Tensor y = Apply(*l, Count({1, 3, 4, 1}));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(y.ToVector(), (std::vector<float>{6, 10}));
  EXPECT_EQ(Error("Cropping2D", {{"cropping", {2, 2}}}, {3, 4, 1}),
            "layer \"l\" (Cropping2D): cropping 4 rows and 4 columns leaves nothing of input "
            "[3, 4, 1]");
}

TEST(UpSampling2D, RepeatsEachRowAndColumn) {
  const Tensor x = Tensor::FromVector({1, 1, 2, 1}, {1, 2});
  EXPECT_EQ(Apply(*Built("UpSampling2D", {{"size", {2, 1}}}, {1, 2, 1}), x).ToVector(),
            (std::vector<float>{1, 2, 1, 2}));
  const Tensor y = Apply(*Built("UpSampling2D", {}, {1, 2, 1}), x);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 4, 1}));
  EXPECT_EQ(y.ToVector(), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2}));
  EXPECT_NE(Error("UpSampling2D", {{"interpolation", "bilinear"}}, {1, 2, 1}).find("interpolation"),
            std::string::npos);
}

TEST(RepeatVector, RepeatsTheFeaturesNTimes) {
  const Tensor y = Apply(*Built("RepeatVector", {{"n", 3}}, {2}), Count({2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(y.ToVector(), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(Error("RepeatVector", {}, {2}), "n is required");
  EXPECT_EQ(Error("RepeatVector", {{"n", 2}}, {2, 2}),
            "layer \"l\" (RepeatVector): expects rank-1 input [features], got [2, 2]");
}

TEST(Rescaling, ScalesAndOffsets) {
  const Tensor y = Apply(*Built("Rescaling", {{"scale", 0.5}, {"offset", -1}}, {3}),
                         Tensor::FromVector({1, 3}, {0, 2, 4}));
  EXPECT_EQ(y.ToVector(), (std::vector<float>{-1, 0, 1}));
  EXPECT_EQ(Error("Rescaling", {}, {3}), "scale is required");
}

TEST(ReshapingLayers, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(7);
  struct Case {
    const char* cls;
    json config;
    Shape in;
  };
  const std::vector<Case> cases = {
      {"ZeroPadding2D", {{"padding", {{1, 2}, {0, 1}}}}, {2, 3, 2}},
      {"Cropping2D", {{"cropping", {{1, 0}, {1, 1}}}}, {3, 4, 2}},
      {"UpSampling2D", {{"size", {2, 3}}}, {2, 2, 1}},
      {"RepeatVector", {{"n", 2}}, {3}},
      {"Rescaling", {{"scale", 2}, {"offset", 1}}, {3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.cls);
    auto l = Built(c.cls, c.config, c.in);
    Shape batched = c.in;
    batched.insert(batched.begin(), 2);
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; },
                         {RandomTensor(batched, rng)});
  }
}

}  // namespace
}  // namespace edl::nn::layers
