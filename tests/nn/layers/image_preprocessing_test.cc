// Resizing and CenterCrop with Keras' semantics: tf.image.resize's known
// result on a 2x2 image, bilinear and nearest resizing against per-pixel
// loops written from the definition, crop_to_aspect_ratio, the centred
// window, gradients and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "nn/functional.h"
#include "nn/layers/layer_factory.h"
#include "tests/nn/gradient_check.h"
#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using layer_testing::BuiltLayer;
using layer_testing::LayerError;
using nlohmann::json;
using testing::ExpectGradientsMatch;
using testing::RandomTensor;

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(Resizing, GivesTfImageResizesResultOnATwoByTwoImage) {
  // tf.image.resize([[0, 1], [2, 3]], [4, 4]) (half-pixel centres).
  auto l = BuiltLayer("Resizing", {{"height", 4}, {"width", 4}}, {{2, 2, 1}});
  const Tensor x = Tensor::FromVector({1, 2, 2, 1}, {0, 1, 2, 3});
  ExpectNear(l->Call({Var(x)}, {})[0].value().ToVector(),
             {0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3});
}

// Pixel (i, j, c) of image n resized to oh x ow, from the definition.
float Sample(const Tensor& x, int64_t n, int64_t i, int64_t j, int64_t c, int64_t oh, int64_t ow,
             bool bilinear) {
  const Shape& s = x.shape();
  auto at = [&](int64_t y, int64_t z) { return x.f32()[((n * s[1] + y) * s[2] + z) * s[3] + c]; };
  const double sy = static_cast<double>(s[1]) / oh, sz = static_cast<double>(s[2]) / ow;
  if (!bilinear) {
    return at(std::min<int64_t>(std::floor((i + 0.5) * sy), s[1] - 1),
              std::min<int64_t>(std::floor((j + 0.5) * sz), s[2] - 1));
  }
  const double y = (i + 0.5) * sy - 0.5, z = (j + 0.5) * sz - 0.5;
  const int64_t y0 = std::max<int64_t>(std::floor(y), 0),
                y1 = std::min<int64_t>(std::ceil(y), s[1] - 1);
  const int64_t z0 = std::max<int64_t>(std::floor(z), 0),
                z1 = std::min<int64_t>(std::ceil(z), s[2] - 1);
  const double fy = y - std::floor(y), fz = z - std::floor(z);
  const double top = at(y0, z0) + (at(y0, z1) - at(y0, z0)) * fz;
  const double bottom = at(y1, z0) + (at(y1, z1) - at(y1, z0)) * fz;
  return static_cast<float>(top + (bottom - top) * fy);
}

TEST(Resizing, BilinearAndNearestMatchTheDefinitionUpAndDown) {
  std::mt19937_64 rng(1);
  const Tensor x = RandomTensor({2, 5, 7, 3}, rng);
  for (const char* method : {"bilinear", "nearest"}) {
    for (auto [oh, ow] : {std::pair<int64_t, int64_t>{3, 4}, {8, 11}, {5, 2}}) {
      SCOPED_TRACE(std::string(method) + " " + std::to_string(oh) + "x" + std::to_string(ow));
      auto l = BuiltLayer("Resizing", {{"height", oh}, {"width", ow}, {"interpolation", method}},
                          {{5, 7, 3}});
      std::vector<float> want;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j)
            for (int64_t c = 0; c < 3; ++c)
              want.push_back(Sample(x, n, i, j, c, oh, ow, std::string(method) == "bilinear"));
      ExpectNear(l->Call({Var(x)}, {})[0].value().ToVector(), want);
    }
  }
}

TEST(Resizing, CropToAspectRatioResizesTheLargestCentredWindowOfTheTargetShape) {
  std::mt19937_64 rng(2);
  const Tensor x = RandomTensor({1, 6, 9, 2}, rng);
  // Target 4x4 (square): the centred 6x6 window, columns 1..6.
  auto cropped = BuiltLayer(
      "Resizing", {{"height", 4}, {"width", 4}, {"crop_to_aspect_ratio", true}}, {{6, 9, 2}});
  auto plain = BuiltLayer("Resizing", {{"height", 4}, {"width", 4}}, {{6, 6, 2}});
  const Var window = fn::Slice(Var(x), 2, 1, 6);
  ExpectNear(cropped->Call({Var(x)}, {})[0].value().ToVector(),
             plain->Call({window}, {})[0].value().ToVector());
}

TEST(CenterCrop, KeepsTheCentredWindowRoundingItsOffsetDown) {
  const Tensor x = Tensor::FromVector({1, 4, 5, 1}, {0,  1,  2,  3,  4,   //
                                                     5,  6,  7,  8,  9,   //
                                                     10, 11, 12, 13, 14,  //
                                                     15, 16, 17, 18, 19});
  auto l = BuiltLayer("CenterCrop", {{"height", 2}, {"width", 2}}, {{4, 5, 1}});
  // Rows 1..2, columns 1..2 ((5 - 2) / 2 = 1).
  ExpectNear(l->Call({Var(x)}, {})[0].value().ToVector(), {6, 7, 11, 12});
}

TEST(Resizing, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(3);
  for (const json& config : {json{{"height", 3}, {"width", 5}},
                             json{{"height", 2}, {"width", 2}, {"crop_to_aspect_ratio", true}}}) {
    SCOPED_TRACE(config.dump());
    auto l = BuiltLayer("Resizing", config, {{4, 3, 2}});
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; },
                         {RandomTensor({2, 4, 3, 2}, rng)});
  }
}

TEST(ImagePreprocessing, RefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(LayerError("Resizing", {{"width", 3}}, {{4, 4, 1}}), "height is required");
  EXPECT_EQ(LayerError("Resizing", {{"height", 3}, {"width", 3}, {"interpolation", "bicubic"}},
                       {{4, 4, 1}}),
            "interpolation must be bilinear or nearest, got \"bicubic\"");
  EXPECT_EQ(LayerError("Resizing", {{"height", 3}, {"width", 0}}, {{4, 4, 1}}),
            "width must be positive");
  EXPECT_EQ(LayerError("Resizing", {{"height", 3}, {"width", 3}, {"pad_to_aspect_ratio", true}},
                       {{4, 4, 1}}),
            "pad_to_aspect_ratio true is not supported");
  EXPECT_EQ(LayerError("Resizing", {{"height", 3}, {"width", 3}}, {{4, 4}}),
            "layer \"l\" (Resizing): expects rank-3 input [H, W, C], got [4, 4]");
  EXPECT_EQ(LayerError("CenterCrop", {{"height", 5}, {"width", 3}}, {{4, 4, 1}}),
            "layer \"l\" (CenterCrop): input [4, 4, 1] is smaller than the 5x3 window "
            "(resizing up is not supported)");
}

}  // namespace
}  // namespace edl::nn::layers
