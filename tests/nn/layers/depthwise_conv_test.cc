// Grouped convolutions: DepthwiseConv2D is one small convolution per input
// channel, Conv2D with groups one convolution per group of channels,
// SeparableConv2D a depthwise step then a 1x1 convolution; gradients on
// the reference loops and oneDNN; errors. (Predictions are held to the real
// TF.js by the round trip, tests/tfjs/build_models.js.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "nn/functional.h"
#include "nn/layers/layer_factory.h"
#include "tensor/backend.h"
#include "tensor/reference/loop_backend.h"
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

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

// Channels [begin, begin + n) of x (last axis).
Var Channels(const Var& x, int64_t begin, int64_t n) { return fn::Slice(x, -1, begin, n); }

TEST(DepthwiseConv2D, ConvolvesEachChannelWithItsOwnFilters) {
  std::mt19937_64 rng(1);
  const Tensor x = RandomTensor({2, 6, 5, 3}, rng);
  const json config = {
      {"kernel_size", 3}, {"strides", 2}, {"padding", "same"}, {"depth_multiplier", 2}};
  auto l = BuiltLayer("DepthwiseConv2D", config, {{6, 5, 3}});
  RandomizeWeights(*l, 2);
  const Tensor kernel = l->weights()[0]->value;  // [3, 3, 3, 2]
  ASSERT_EQ(kernel.shape(), (Shape{3, 3, 3, 2}));
  const Tensor bias = l->weights()[1]->value;  // [6]
  std::vector<Var> per_channel;
  for (int64_t c = 0; c < 3; ++c) {
    tensor::Conv2DParams p;
    p.strides = {2, 2};
    p.padding = tensor::ComputePadding(tensor::Padding::kSame, 6, 5, 3, 3, {2, 2}, {1, 1});
    // Channel c's filters: kernel[:, :, c:c+1, :] is [3, 3, 1, 2].
    per_channel.push_back(fn::Conv2D(Channels(Var(x), c, 1), fn::Slice(Var(kernel), 2, c, 1),
                                     fn::Slice(Var(bias), 0, 2 * c, 2), p));
  }
  for (tensor::Backend* b : {&tensor::ReferenceBackend(), &tensor::CpuBackend()}) {
    SCOPED_TRACE(b->name());
    tensor::ScopedBackend scoped(*b);
    ExpectNear(l->Call({Var(x)}, {})[0].value().ToVector(),
               fn::Concat(per_channel, -1).value().ToVector());
  }
}

TEST(Conv2DGroups, IsOneConvolutionPerGroupOfChannels) {
  std::mt19937_64 rng(3);
  const Tensor x = RandomTensor({2, 5, 5, 4}, rng);
  auto l = BuiltLayer("Conv2D", {{"filters", 6}, {"kernel_size", 2}, {"groups", 2}}, {{5, 5, 4}});
  RandomizeWeights(*l, 4);
  const Var kernel(l->weights()[0]->value), bias(l->weights()[1]->value);
  ASSERT_EQ(kernel.shape(), (Shape{2, 2, 2, 6}));
  std::vector<Var> groups;
  for (int64_t g = 0; g < 2; ++g) {
    groups.push_back(fn::Conv2D(Channels(Var(x), 2 * g, 2), fn::Slice(kernel, 3, 3 * g, 3),
                                fn::Slice(bias, 0, 3 * g, 3), {}));
  }
  for (tensor::Backend* b : {&tensor::ReferenceBackend(), &tensor::CpuBackend()}) {
    SCOPED_TRACE(b->name());
    tensor::ScopedBackend scoped(*b);
    ExpectNear(l->Call({Var(x)}, {})[0].value().ToVector(),
               fn::Concat(groups, -1).value().ToVector());
  }
}

TEST(SeparableConv2D, IsADepthwiseStepThenAPointwiseConvolution) {
  std::mt19937_64 rng(5);
  const Tensor x = RandomTensor({1, 5, 4, 2}, rng);
  auto sep =
      BuiltLayer("SeparableConv2D",
                 {{"filters", 3}, {"kernel_size", 3}, {"padding", "same"}, {"depth_multiplier", 2}},
                 {{5, 4, 2}});
  RandomizeWeights(*sep, 6);
  std::vector<Parameter*> w = sep->weights();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[1]->value.shape(), (Shape{1, 1, 4, 3}));
  auto depthwise = BuiltLayer(
      "DepthwiseConv2D",
      {{"kernel_size", 3}, {"padding", "same"}, {"depth_multiplier", 2}, {"use_bias", false}},
      {{5, 4, 2}});
  depthwise->weights()[0]->value.CopyFrom(w[0]->value);
  auto pointwise = BuiltLayer("Conv2D", {{"filters", 3}, {"kernel_size", 1}}, {{5, 4, 4}});
  pointwise->weights()[0]->value.CopyFrom(w[1]->value);
  pointwise->weights()[1]->value.CopyFrom(w[2]->value);
  ExpectNear(sep->Call({Var(x)}, {})[0].value().ToVector(),
             pointwise->Call(depthwise->Call({Var(x)}, {}), {})[0].value().ToVector());
}

TEST(GroupedConvolutions, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(7);
  for (const auto& [cls, config] : std::vector<std::pair<std::string, json>>{
           {"DepthwiseConv2D", {{"kernel_size", 2}, {"strides", 2}, {"depth_multiplier", 2}}},
           {"SeparableConv2D", {{"filters", 2}, {"kernel_size", 2}, {"padding", "same"}}},
           {"Conv2D", {{"filters", 4}, {"kernel_size", 2}, {"groups", 2}}}}) {
    SCOPED_TRACE(cls);
    auto l = BuiltLayer(cls, config, {{4, 4, 2}});
    RandomizeWeights(*l, 8);
    ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {}); },
                               {RandomTensor({2, 4, 4, 2}, rng)}, l->weights());
  }
}

// A backend that, like CUDA today, has no grouped convolutions.
class WithoutGroupedConv : public tensor::reference::LoopBackend {
 public:
  bool GroupedConv() const override { return false; }
};

TEST(GroupedConvolutions, BackendsWithoutThemGetOneConvolutionPerGroup) {
  std::mt19937_64 rng(9);
  const Tensor x = RandomTensor({2, 4, 4, 2}, rng);
  auto l = BuiltLayer("SeparableConv2D",
                      {{"filters", 3}, {"kernel_size", 2}, {"depth_multiplier", 2}}, {{4, 4, 2}});
  RandomizeWeights(*l, 10);
  auto run = [&] {
    for (Parameter* p : l->weights()) p->ZeroGrad();
    Var y = l->Call({Var(x)}, {})[0];
    Backward(fn::Sum(fn::Mul(y, y)));
    std::vector<float> all = y.value().ToVector();
    for (Parameter* p : l->weights()) {
      const std::vector<float> g = p->grad.ToVector();
      all.insert(all.end(), g.begin(), g.end());
    }
    return all;
  };
  const std::vector<float> grouped = run();
  WithoutGroupedConv backend;
  tensor::ScopedBackend scoped(backend);
  ASSERT_FALSE(tensor::GroupedConvAvailable(tensor::Device::kCPU));
  ExpectNear(run(), grouped);
}

TEST(GroupedConvolutions, RefuseWhatTheyCannotHonourNamingTheField) {
  EXPECT_EQ(LayerError("Conv2D", {{"filters", 6}, {"kernel_size", 2}, {"groups", 4}}, {{5, 5, 4}}),
            "groups must be a positive divisor of filters (6), got 4");
  EXPECT_EQ(LayerError("Conv2D", {{"filters", 6}, {"kernel_size", 2}, {"groups", 2}}, {{5, 5, 3}}),
            "layer \"l\" (Conv2D): 3 input channels do not split into 2 groups");
  EXPECT_EQ(
      LayerError("DepthwiseConv2D", {{"kernel_size", 2}, {"depth_multiplier", 0}}, {{5, 5, 3}}),
      "depth_multiplier must be positive");
  EXPECT_EQ(LayerError("SeparableConv2D", {{"kernel_size", 2}}, {{5, 5, 3}}),
            "filters is required");
  EXPECT_EQ(LayerError("DepthwiseConv2D", {{"kernel_size", 6}}, {{5, 5, 3}}),
            "layer \"l\" (DepthwiseConv2D): input [5, 5, 3] is smaller than the 6x6 kernel");
  EXPECT_NE(LayerError("SeparableConv2D",
                       {{"filters", 2},
                        {"kernel_size", 2},
                        {"pointwise_constraint", {{"class_name", "NonNeg"}}}},
                       {{5, 5, 3}})
                .find("pointwise_constraint"),
            std::string::npos);
}

}  // namespace
}  // namespace edl::nn::layers
