// Conv3D and the 3-D poolings against plain loops written here from the
// definitions (TensorFlow's: "same" padding puts the extra plane/row/column
// at the back/bottom/right, average pooling counts only real taps), their
// gradients by finite differences on the reference loops and oneDNN, and
// config errors. (Predictions are held to the real TF.js by the round trip,
// tests/tfjs/build_models.js.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "nn/functional.h"
#include "nn/functional_3d.h"
#include "nn/layers/layer_factory.h"
#include "tensor/backend.h"
#include "tests/nn/gradient_check.h"
#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using layer_testing::BuiltLayer;
using layer_testing::LayerError;
using layer_testing::RandomizeWeights;
using nlohmann::json;
using testing::ExpectWeightGradientsMatch;
using testing::RandomTensor;

using Triple = std::array<int64_t, 3>;

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

// x [N, D, H, W, C] at (n, d, h, w, c), or 0 outside.
float At(const Tensor& x, int64_t n, int64_t d, int64_t h, int64_t w, int64_t c) {
  const Shape& s = x.shape();
  if (d < 0 || h < 0 || w < 0 || d >= s[1] || h >= s[2] || w >= s[3]) return 0.f;
  return x.f32()[(((n * s[1] + d) * s[2] + h) * s[3] + w) * s[4] + c];
}

// The convolution by its definition: pad[a] is the padding before axis a.
std::vector<float> NaiveConv3D(const Tensor& x, const Tensor& k, const Tensor& bias,
                               const Triple& strides, const Triple& dil, const Triple& pad,
                               const Shape& out, int64_t groups) {
  const Shape& ks = k.shape();  // [kd, kh, kw, cg, F]
  const int64_t cg = ks[3], f = ks[4], fg = f / groups;
  std::vector<float> y;
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t od = 0; od < out[1]; ++od)
      for (int64_t oh = 0; oh < out[2]; ++oh)
        for (int64_t ow = 0; ow < out[3]; ++ow)
          for (int64_t o = 0; o < f; ++o) {
            double acc = bias.defined() ? bias.f32()[o] : 0.0;
            const int64_t g = o / fg;
            for (int64_t i = 0; i < ks[0]; ++i)
              for (int64_t j = 0; j < ks[1]; ++j)
                for (int64_t l = 0; l < ks[2]; ++l)
                  for (int64_t c = 0; c < cg; ++c) {
                    const float xv = At(x, n, od * strides[0] + i * dil[0] - pad[0],
                                        oh * strides[1] + j * dil[1] - pad[1],
                                        ow * strides[2] + l * dil[2] - pad[2], g * cg + c);
                    acc += xv * k.f32()[(((i * ks[1] + j) * ks[2] + l) * cg + c) * f + o];
                  }
            y.push_back(static_cast<float>(acc));
          }
  return y;
}

TEST(Conv3D, MatchesTheDefinitionForStridesDilationsSamePaddingAndGroups) {
  struct Case {
    json config;
    Shape in;  // [D, H, W, C]
    Triple pad;
  };
  const Case cases[] = {
      {{{"filters", 3}, {"kernel_size", 2}}, {4, 5, 3, 2}, {0, 0, 0}},
      {{{"filters", 2}, {"kernel_size", {3, 2, 2}}, {"strides", {2, 1, 2}}, {"padding", "same"}},
       {5, 4, 5, 3},
       {1, 0, 0}},  // depth 5, k 3, stride 2: 2 pad planes, 1 before
      {{{"filters", 2}, {"kernel_size", {2, 3, 1}}, {"padding", "same"}},
       {4, 5, 3, 2},
       {0, 1, 0}},  // depth: 1 pad plane, after (as TensorFlow)
      {{{"filters", 2}, {"kernel_size", 2}, {"dilation_rate", {2, 1, 2}}}, {5, 3, 5, 1}, {0, 0, 0}},
      {{{"filters", 4}, {"kernel_size", {1, 2, 2}}, {"groups", 2}, {"use_bias", false}},
       {3, 3, 3, 4},
       {0, 0, 0}},
      {{{"filters", 2}, {"kernel_size", 3}, {"strides", 3}, {"padding", "same"}},
       {4, 4, 4, 1},
       {1, 1, 1}},  // out 2 per axis: (2 - 1) * 3 + 3 - 4 = 2 padded, 1 before
  };
  std::mt19937_64 rng(1);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config.dump());
    auto l = BuiltLayer("Conv3D", c.config, {c.in});
    RandomizeWeights(*l, 2);
    Shape batch = c.in;
    batch.insert(batch.begin(), 2);
    const Tensor x = RandomTensor(batch, rng);
    const json& cfg = c.config;
    auto triple = [&](const char* f) -> Triple {
      if (!cfg.contains(f)) return {1, 1, 1};
      if (cfg[f].is_number())
        return {cfg[f].get<int64_t>(), cfg[f].get<int64_t>(), cfg[f].get<int64_t>()};
      return {cfg[f][0].get<int64_t>(), cfg[f][1].get<int64_t>(), cfg[f][2].get<int64_t>()};
    };
    const Tensor bias = l->weights().size() > 1 ? l->weights()[1]->value : Tensor();
    for (tensor::Backend* b : {&tensor::ReferenceBackend(), &tensor::CpuBackend()}) {
      SCOPED_TRACE(b->name());
      tensor::ScopedBackend scoped(*b);
      const Tensor y = l->Call({Var(x)}, {})[0].value();
      ExpectNear(y.ToVector(),
                 NaiveConv3D(x, l->weights()[0]->value, bias, triple("strides"),
                             triple("dilation_rate"), c.pad, y.shape(), cfg.value("groups", 1)));
    }
  }
}

// Pooling by its definition over the real taps of each window.
std::vector<float> NaivePool3D(tensor::PoolKind kind, const Tensor& x, const Triple& size,
                               const Triple& strides, const Triple& pad, const Shape& out) {
  const Shape& s = x.shape();
  std::vector<float> y;
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t od = 0; od < out[1]; ++od)
      for (int64_t oh = 0; oh < out[2]; ++oh)
        for (int64_t ow = 0; ow < out[3]; ++ow)
          for (int64_t c = 0; c < out[4]; ++c) {
            double sum = 0;
            float max = -std::numeric_limits<float>::infinity();
            int64_t count = 0;
            for (int64_t i = 0; i < size[0]; ++i)
              for (int64_t j = 0; j < size[1]; ++j)
                for (int64_t l = 0; l < size[2]; ++l) {
                  const int64_t d = od * strides[0] + i - pad[0];
                  const int64_t h = oh * strides[1] + j - pad[1];
                  const int64_t w = ow * strides[2] + l - pad[2];
                  if (d < 0 || h < 0 || w < 0 || d >= s[1] || h >= s[2] || w >= s[3]) continue;
                  const float v = At(x, n, d, h, w, c);
                  sum += v;
                  max = std::max(max, v);
                  ++count;
                }
            y.push_back(kind == tensor::PoolKind::kMax ? max : static_cast<float>(sum / count));
          }
  return y;
}

TEST(Pooling3D, MaxAndAverageMatchTheDefinitionWithPaddingLeftOutOfTheAverage) {
  std::mt19937_64 rng(3);
  const Tensor x = RandomTensor({2, 5, 4, 5, 3}, rng);
  struct Case {
    json config;
    Triple size, strides, pad;
  };
  const Case cases[] = {
      {{}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}},
      {{{"pool_size", {3, 2, 2}}, {"strides", 1}, {"padding", "same"}},
       {3, 2, 2},
       {1, 1, 1},
       {1, 0, 0}},
      {{{"pool_size", 2}, {"strides", {2, 1, 2}}, {"padding", "same"}},
       {2, 2, 2},
       {2, 1, 2},
       {0, 0, 0}},
  };
  for (const Case& c : cases) {
    for (auto [cls, kind] :
         {std::pair<const char*, tensor::PoolKind>{"MaxPooling3D", tensor::PoolKind::kMax},
          {"AveragePooling3D", tensor::PoolKind::kAvg}}) {
      SCOPED_TRACE(std::string(cls) + " " + c.config.dump());
      auto l = BuiltLayer(cls, c.config, {{5, 4, 5, 3}});
      for (tensor::Backend* b : {&tensor::ReferenceBackend(), &tensor::CpuBackend()}) {
        SCOPED_TRACE(b->name());
        tensor::ScopedBackend scoped(*b);
        const Tensor y = l->Call({Var(x)}, {})[0].value();
        ExpectNear(y.ToVector(), NaivePool3D(kind, x, c.size, c.strides, c.pad, y.shape()));
      }
    }
  }
}

TEST(GlobalPooling3D, ReducesDepthHeightAndWidth) {
  std::mt19937_64 rng(4);
  const Tensor x = RandomTensor({2, 3, 2, 4, 5}, rng);
  auto avg = BuiltLayer("GlobalAveragePooling3D", {}, {{3, 2, 4, 5}});
  auto max = BuiltLayer("GlobalMaxPooling3D", {{"keepdims", true}}, {{3, 2, 4, 5}});
  EXPECT_EQ(max->Call({Var(x)}, {})[0].shape(), (Shape{2, 1, 1, 1, 5}));
  const std::vector<float> got = avg->Call({Var(x)}, {})[0].value().ToVector();
  const std::vector<float> top = max->Call({Var(x)}, {})[0].value().ToVector();
  ASSERT_EQ(got.size(), 10u);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 5; ++c) {
      double sum = 0;
      float m = -1e30f;
      for (int64_t i = 0; i < 24; ++i) {
        const float v = x.f32()[(n * 24 + i) * 5 + c];
        sum += v;
        m = std::max(m, v);
      }
      EXPECT_NEAR(got[n * 5 + c], sum / 24, 1e-5);
      EXPECT_EQ(top[n * 5 + c], m);
    }
}

// <Conv3D(y, w), x> = <y, Conv3DTranspose(x, w)>: the transposed
// convolution is the adjoint of the convolution with the same kernel.
TEST(Conv3DTranspose, IsTheAdjointOfConv3D) {
  std::mt19937_64 rng(8);
  struct Case {
    Shape y;  // the transposed convolution's output [N, D, H, W, C_out]
    Shape w;  // [kd, kh, kw, C_out, C_in]
    Triple strides, dilations;
    tensor::Padding padding;
  };
  const Case cases[] = {
      {{2, 5, 4, 3, 2}, {2, 2, 2, 2, 3}, {1, 1, 1}, {1, 1, 1}, tensor::Padding::kValid},
      {{1, 6, 4, 6, 1}, {3, 2, 3, 1, 2}, {2, 2, 2}, {1, 1, 1}, tensor::Padding::kSame},
      {{1, 7, 5, 3, 2}, {2, 2, 1, 2, 2}, {3, 1, 2}, {1, 1, 1}, tensor::Padding::kValid},
      {{2, 6, 5, 5, 1}, {2, 3, 2, 1, 2}, {1, 1, 1}, {2, 1, 2}, tensor::Padding::kSame},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(tensor::ShapeString(c.y) + " * " + tensor::ShapeString(c.w));
    fn::Conv3DParams p;
    p.strides = c.strides;
    p.dilations = c.dilations;
    p.padding = fn::ComputePadding3D(c.padding, {c.y[1], c.y[2], c.y[3]}, {c.w[0], c.w[1], c.w[2]},
                                     c.strides, c.dilations);
    const Tensor y = RandomTensor(c.y, rng), w = RandomTensor(c.w, rng);
    const Var conv = fn::Conv3D(Var(y), Var(w), Var(), p);
    const Tensor x = RandomTensor(conv.shape(), rng);
    const Var back = fn::Conv3DTranspose(Var(x), Var(w), c.y, p);
    ASSERT_EQ(back.shape(), c.y);
    const double lhs = fn::Sum(fn::Mul(conv, Var(x))).value().item();
    const double rhs = fn::Sum(fn::Mul(Var(y), back)).value().item();
    EXPECT_NEAR(lhs, rhs, 1e-3 * (1 + std::abs(lhs)));
  }
}

TEST(Conv3DTranspose, OutputsEachStridedPositionAndKeepsTheKerasKernelLayout) {
  auto l = BuiltLayer("Conv3DTranspose",
                      {{"filters", 4}, {"kernel_size", {2, 3, 1}}, {"strides", 2}}, {{3, 2, 5, 2}});
  EXPECT_EQ(l->weights()[0]->value.shape(), (Shape{2, 3, 1, 4, 2}));
  std::mt19937_64 rng(9);
  EXPECT_EQ(l->Call({Var(RandomTensor({1, 3, 2, 5, 2}, rng))}, {})[0].shape(),
            (Shape{1, 6, 5, 10, 4}));  // d * 2 + max(k - 2, 0) per axis (Keras)
  auto same = BuiltLayer("Conv3DTranspose",
                         {{"filters", 1}, {"kernel_size", 3}, {"strides", 2}, {"padding", "same"}},
                         {{3, 2, 5, 2}});
  EXPECT_EQ(same->Call({Var(RandomTensor({1, 3, 2, 5, 2}, rng))}, {})[0].shape(),
            (Shape{1, 6, 4, 10, 1}));
}

// Keras' rule: a `valid` output is d * stride + max(kernel - stride, 0), and
// output_padding p gives (d - 1) * stride + kernel - 2 * pad + p.
TEST(Conv3DTranspose, GivesKerasOutputSizesForWideStridesAndOutputPadding) {
  std::mt19937_64 rng(4);
  auto wide =
      BuiltLayer("Conv3DTranspose", {{"filters", 1}, {"kernel_size", {1, 2, 3}}, {"strides", 3}},
                 {{2, 3, 2, 2}});
  EXPECT_EQ(wide->Call({Var(RandomTensor({1, 2, 3, 2, 2}, rng))}, {})[0].shape(),
            (Shape{1, 6, 9, 6, 1}));
  auto padded = BuiltLayer("Conv3DTranspose",
                           {{"filters", 1},
                            {"kernel_size", 3},
                            {"strides", {2, 2, 3}},
                            {"padding", "same"},
                            {"output_padding", {1, 0, 2}}},
                           {{2, 3, 2, 2}});
  EXPECT_EQ(padded->Call({Var(RandomTensor({1, 2, 3, 2, 2}, rng))}, {})[0].shape(),
            (Shape{1, 4, 5, 6, 1}));
  EXPECT_EQ(LayerError("Conv3DTranspose",
                       {{"filters", 1}, {"kernel_size", 2}, {"output_padding", 1}}, {{2, 3, 2, 2}}),
            "output_padding must be at least 0 and smaller than strides (as Keras), got 1 with "
            "strides 1");
}

TEST(Conv3DAndPooling3D, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(5);
  for (const auto& [cls, config] : std::vector<std::pair<std::string, json>>{
           {"Conv3D",
            {{"filters", 2}, {"kernel_size", 2}, {"strides", {2, 1, 1}}, {"padding", "same"}}},
           {"Conv3D", {{"filters", 2}, {"kernel_size", {2, 1, 2}}, {"dilation_rate", {2, 1, 1}}}},
           {"Conv3D", {{"filters", 2}, {"kernel_size", 1}, {"groups", 2}}},
           {"Conv3DTranspose",
            {{"filters", 2}, {"kernel_size", 2}, {"strides", {2, 1, 1}}, {"padding", "same"}}},
           {"MaxPooling3D", {{"pool_size", 2}, {"strides", 1}, {"padding", "same"}}},
           {"AveragePooling3D", {{"pool_size", {3, 2, 2}}, {"strides", 2}, {"padding", "same"}}},
           {"GlobalAveragePooling3D", json::object()}}) {
    SCOPED_TRACE(cls + " " + config.dump());
    auto l = BuiltLayer(cls, config, {{4, 3, 3, 2}});
    RandomizeWeights(*l, 6);
    ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {}); },
                               {RandomTensor({2, 4, 3, 3, 2}, rng)}, l->weights());
  }
}

TEST(Conv3DAndPooling3D, RefuseBadConfigsNamingTheField) {
  EXPECT_EQ(LayerError("Conv3D", {{"filters", 2}}, {{4, 4, 4, 1}}), "kernel_size is required");
  EXPECT_EQ(LayerError("Conv3D", {{"filters", 2}, {"kernel_size", {2, 2}}}, {{4, 4, 4, 1}}),
            "kernel_size must be 1 or 3 integers, got [2,2]");
  EXPECT_EQ(
      LayerError("Conv3D", {{"filters", 2}, {"kernel_size", 2}, {"data_format", "channels_first"}},
                 {{4, 4, 4, 1}})
          .find("data_format"),
      0u);
  EXPECT_EQ(LayerError("Conv3D",
                       {{"filters", 2}, {"kernel_size", 2}, {"strides", 2}, {"dilation_rate", 2}},
                       {{4, 4, 4, 1}}),
            "strides > 1 cannot be combined with dilation_rate > 1 (as Keras)");
  EXPECT_EQ(LayerError("Conv3D", {{"filters", 2}, {"kernel_size", 2}}, {{4, 4, 1}}),
            "layer \"l\" (Conv3D): expects rank-4 input [D, H, W, C], got [4, 4, 1]");
  EXPECT_EQ(LayerError("Conv3D", {{"filters", 2}, {"kernel_size", {5, 1, 1}}}, {{4, 4, 4, 1}}),
            "layer \"l\" (Conv3D): input [4, 4, 4, 1] is smaller than the 5x1x1 kernel");
  EXPECT_EQ(LayerError("Conv3DTranspose",
                       {{"filters", 2}, {"kernel_size", 2}, {"output_padding", 1}}, {{4, 4, 4, 1}})
                .find("output_padding"),
            0u);
  EXPECT_EQ(LayerError("Conv3DTranspose", {{"filters", 2}, {"kernel_size", 2}}, {{4, 4, 1}}),
            "layer \"l\" (Conv3DTranspose): expects rank-4 input [D, H, W, C], got [4, 4, 1]");
  EXPECT_EQ(LayerError("MaxPooling3D", {{"pool_size", 0}}, {{4, 4, 4, 1}}),
            "pool_size must be positive");
  EXPECT_EQ(
      LayerError("AveragePooling3D", {{"pool_size", 3}}, {{2, 4, 4, 1}}),
      "layer \"l\" (AveragePooling3D): input [2, 4, 4, 1] is smaller than the 3x3x3 pool_size");
  EXPECT_EQ(LayerError("GlobalMaxPooling3D", {}, {{4, 4, 1}}),
            "layer \"l\" (GlobalMaxPooling3D): expects rank-4 input [D, H, W, C], got [4, 4, 1]");
}

}  // namespace
}  // namespace edl::nn::layers
