// Conv2DTranspose: Keras' kernel layout and output sizes, what a strided
// transposed convolution computes, gradients, and config errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

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

Shape OutputShape(const json& config, const Shape& in) {
  auto l = CreateLayer("Conv2DTranspose", "l", config);
  EDL_CHECK(l.ok()) << l.status().message();
  std::mt19937_64 rng(1);
  auto out = (*l)->Build({in}, rng);
  EDL_CHECK(out.ok()) << out.status().message();
  return (*out)[0];
}

TEST(Conv2DTranspose, HasKerasKernelLayoutAndOutputSizes) {
  auto l = BuiltLayer("Conv2DTranspose", {{"name", "t"}, {"filters", 4}, {"kernel_size", 3}},
                      {{5, 6, 2}});
  EXPECT_EQ(l->weights()[0]->name, "t/kernel");
  EXPECT_EQ(l->weights()[0]->value.shape(), (Shape{3, 3, 4, 2}));  // [kh, kw, filters, in]
  EXPECT_EQ(l->weights()[1]->value.shape(), (Shape{4}));
  EXPECT_EQ(OutputShape({{"filters", 4}, {"kernel_size", 3}}, {5, 6, 2}), (Shape{7, 8, 4}));
  EXPECT_EQ(OutputShape({{"filters", 4}, {"kernel_size", 3}, {"strides", 2}}, {5, 6, 2}),
            (Shape{11, 13, 4}));
  EXPECT_EQ(
      OutputShape({{"filters", 4}, {"kernel_size", 3}, {"strides", {2, 3}}, {"padding", "same"}},
                  {5, 6, 2}),
      (Shape{10, 18, 4}));
  EXPECT_EQ(OutputShape({{"filters", 1}, {"kernel_size", 3}, {"dilation_rate", 2}}, {5, 6, 2}),
            (Shape{9, 10, 1}));
}

// Keras and TF.js: a `valid` output is in * stride + max(kernel - stride, 0),
// so a stride wider than the kernel leaves (stride - kernel) rows of bias
// after the last input's window.
TEST(Conv2DTranspose, GivesAStrideWiderThanTheKernelKerasOutputSize) {
  EXPECT_EQ(OutputShape({{"filters", 2}, {"kernel_size", 2}, {"strides", 3}}, {3, 4, 1}),
            (Shape{9, 12, 2}));
  EXPECT_EQ(OutputShape(
                {{"filters", 2}, {"kernel_size", {1, 2}}, {"strides", {2, 3}}, {"padding", "same"}},
                {3, 4, 1}),
            (Shape{6, 12, 2}));
}

// Keras' rule with output_padding p: (in - 1) * stride + kernel - 2 * pad + p,
// pad = kernel / 2 for same.
TEST(Conv2DTranspose, HonoursOutputPaddingByKerasRule) {
  EXPECT_EQ(OutputShape({{"filters", 1}, {"kernel_size", 3}, {"strides", 2}, {"output_padding", 1}},
                        {5, 6, 2}),
            (Shape{12, 14, 1}));
  EXPECT_EQ(OutputShape({{"filters", 1},
                         {"kernel_size", 3},
                         {"strides", {2, 3}},
                         {"padding", "same"},
                         {"output_padding", {1, 0}}},
                        {5, 6, 2}),
            (Shape{10, 16, 1}));
  // Kernel 3 of ones, stride 2, same, output_padding 1 on a 2x2 input: the
  // output is 4x4, padded 0 before and 1 after, so output row r sums the
  // inputs i with 2i <= r <= 2i + 2.
  auto l = BuiltLayer("Conv2DTranspose",
                      {{"filters", 1},
                       {"kernel_size", 3},
                       {"strides", 2},
                       {"padding", "same"},
                       {"output_padding", 1},
                       {"use_bias", false}},
                      {{2, 2, 1}});
  l->weights()[0]->value.CopyFrom(Tensor::Full({3, 3, 1, 1}, 1.f));
  const Tensor x = Tensor::FromVector({1, 2, 2, 1}, {1, 2, 3, 4});
  EXPECT_EQ(l->Call({Var(x)}, {})[0].value().ToVector(),
            (std::vector<float>{1, 1, 3, 2, 1, 1, 3, 2, 4, 4, 10, 6, 3, 3, 7, 4}));
  EXPECT_EQ(l->Config()["output_padding"], json({1, 1}));
}

TEST(Conv2DTranspose, SpreadsEachInputOverItsStridedWindow) {
  // A 1x1 kernel of weight 1 with stride 2: the input's values land on
  // every other row and column, zeros between and after (2 * 2 rows, as
  // Keras).
  auto l = BuiltLayer("Conv2DTranspose", {{"filters", 1}, {"kernel_size", 1}, {"strides", 2}},
                      {{2, 2, 1}});
  l->weights()[0]->value.CopyFrom(Tensor::FromVector({1, 1, 1, 1}, {1}));
  const Tensor x = Tensor::FromVector({1, 2, 2, 1}, {1, 2, 3, 4});
  EXPECT_EQ(l->Call({Var(x)}, {})[0].value().ToVector(),
            (std::vector<float>{1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}));
  // A 2x2 kernel of ones, stride 1: each input adds itself to a 2x2 block.
  auto sum = BuiltLayer("Conv2DTranspose",
                        {{"filters", 1}, {"kernel_size", 2}, {"use_bias", false}}, {{2, 2, 1}});
  sum->weights()[0]->value.CopyFrom(Tensor::Full({2, 2, 1, 1}, 1.f));
  EXPECT_EQ(sum->Call({Var(x)}, {})[0].value().ToVector(),
            (std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
}

TEST(Conv2DTranspose, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(3);
  for (const char* padding : {"valid", "same"}) {
    SCOPED_TRACE(padding);
    auto l = BuiltLayer("Conv2DTranspose",
                        {{"filters", 2},
                         {"kernel_size", 3},
                         {"strides", 2},
                         {"padding", padding},
                         {"bias_initializer", "ones"}},
                        {{2, 3, 2}});
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; },
                         {RandomTensor({2, 2, 3, 2}, rng)});
  }
}

TEST(Conv2DTranspose, RefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(
      LayerError("Conv2DTranspose",
                 {{"filters", 2}, {"kernel_size", 3}, {"output_padding", {1, 1}}}, {{4, 4, 1}}),
      "output_padding must be at least 0 and smaller than strides (as Keras), got [1,1] "
      "with strides 1");
  // Even kernel, same padding, no extra row: 8 rows, which a stride-2 same
  // convolution maps back to 4, not the input's 5 (TensorFlow refuses it too).
  EXPECT_EQ(LayerError("Conv2DTranspose",
                       {{"filters", 2},
                        {"kernel_size", 2},
                        {"strides", 2},
                        {"padding", "same"},
                        {"output_padding", 0}},
                       {{5, 6, 1}}),
            "layer \"l\" (Conv2DTranspose): output_padding 0 gives an output of 8 on axis 1, "
            "which the convolution maps back to 4, not 5 (input [5, 6, 1])");
  EXPECT_EQ(LayerError("Conv2DTranspose", {{"filters", 2}, {"kernel_size", 3}}, {{4, 4}}),
            "layer \"l\" (Conv2DTranspose): expects rank-3 input [H, W, C], got [4, 4]");
  EXPECT_EQ(LayerError("Conv2DTranspose", {{"kernel_size", 3}}, {{4, 4, 1}}),
            "filters is required");
}

}  // namespace
}  // namespace edl::nn::layers
