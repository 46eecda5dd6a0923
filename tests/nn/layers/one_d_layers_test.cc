// Conv1D and the 1-D pooling layers: shapes (valid, same, causal; strides,
// dilation), values against the 2-D layers on a height-1 image, causality,
// gradients by finite differences, and config errors that name the field.
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

std::unique_ptr<Layer> Built(const std::string& cls, const json& config,
                             const std::vector<Shape>& in) {
  return layer_testing::BuiltLayer(cls, config, in);
}

std::string Error(const std::string& cls, const json& config, const Shape& in) {
  return layer_testing::LayerError(cls, config, {in});
}

Shape OutShape(const std::string& cls, const json& config, const Shape& in) {
  auto l = CreateLayer(cls, "l", config);
  EDL_CHECK(l.ok()) << l.status().message();
  std::mt19937_64 rng(1);
  auto out = (*l)->Build({in}, rng);
  EDL_CHECK(out.ok()) << out.status().message();
  return (*out)[0];
}

TEST(Conv1D, HasAStepsKernelAndTheShapesOfValidSameAndCausalPadding) {
  auto c = Built("Conv1D", {{"name", "c"}, {"filters", 4}, {"kernel_size", 3}}, {{10, 2}});
  EXPECT_EQ(c->weights()[0]->name, "c/kernel");
  EXPECT_EQ(c->weights()[0]->value.shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(OutShape("Conv1D", {{"filters", 4}, {"kernel_size", 3}}, {10, 2}), (Shape{8, 4}));
  EXPECT_EQ(OutShape("Conv1D",
                     {{"filters", 4}, {"kernel_size", {3}}, {"padding", "same"}, {"strides", 2}},
                     {10, 2}),
            (Shape{5, 4}));
  EXPECT_EQ(
      OutShape("Conv1D",
               {{"filters", 4}, {"kernel_size", 3}, {"padding", "causal"}, {"dilation_rate", 2}},
               {10, 2}),
      (Shape{10, 4}));
  EXPECT_EQ(c->Config()["kernel_size"], json({3}));
  EXPECT_EQ(c->class_name(), std::string("Conv1D"));
}

TEST(Conv1D, ComputesWhatConv2DComputesOnAHeightOneImage) {
  std::mt19937_64 rng(4);
  const json config = {{"filters", 3}, {"kernel_size", 2}, {"padding", "same"}};
  auto c1 = Built("Conv1D", config, {{7, 2}});
  json config2 = config;
  config2["kernel_size"] = {1, 2};
  auto c2 = Built("Conv2D", config2, {{1, 7, 2}});
  const Tensor kernel = RandomTensor({2, 2, 3}, rng);
  c1->weights()[0]->value.CopyFrom(kernel);
  c2->weights()[0]->value.CopyFrom(kernel.Reshape({1, 2, 2, 3}));
  const Tensor bias = RandomTensor({3}, rng);
  c1->weights()[1]->value.CopyFrom(bias);
  c2->weights()[1]->value.CopyFrom(bias);
  const Tensor x = RandomTensor({2, 7, 2}, rng);
  EXPECT_EQ(c1->Call({Var(x)}, {})[0].value().ToVector(),
            c2->Call({Var(x.Reshape({2, 1, 7, 2}))}, {})[0].value().ToVector());
}

TEST(Conv1D, CausalOutputsDependOnlyOnThePast) {
  std::mt19937_64 rng(6);
  auto c = Built("Conv1D",
                 {{"filters", 2}, {"kernel_size", 3}, {"padding", "causal"}, {"dilation_rate", 2}},
                 {{9, 1}});
  Tensor x = RandomTensor({1, 9, 1}, rng);
  const std::vector<float> before = c->Call({Var(x)}, {})[0].value().ToVector();
  x.f32()[6] += 5.f;  // step 6 changes: outputs 0..5 must not
  const std::vector<float> after = c->Call({Var(x)}, {})[0].value().ToVector();
  for (int t = 0; t < 9; ++t) {
    for (int f = 0; f < 2; ++f) {
      if (t < 6) {
        EXPECT_EQ(after[t * 2 + f], before[t * 2 + f]) << "step " << t;
      }
    }
  }
  EXPECT_NE(after[6 * 2], before[6 * 2]);
}

TEST(Conv1D, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(8);
  for (const char* padding : {"valid", "same", "causal"}) {
    SCOPED_TRACE(padding);
    auto c = Built("Conv1D",
                   {{"filters", 2},
                    {"kernel_size", 3},
                    {"padding", padding},
                    {"strides", std::string(padding) == "same" ? 2 : 1}},
                   {{6, 2}});
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return c->Call(v, {})[0]; },
                         {RandomTensor({2, 6, 2}, rng)});
  }
}

TEST(Conv1D, RefusesWhatIsNotOneDimensionalNamingTheField) {
  EXPECT_EQ(Error("Conv1D", {{"filters", 2}, {"kernel_size", {3, 3}}}, {6, 2}),
            "kernel_size must be 1 integer for Conv1D, got [3,3]");
  EXPECT_EQ(Error("Conv1D", {{"filters", 2}, {"kernel_size", 3}}, {6, 2, 1}),
            "layer \"l\" (Conv1D): expects rank-2 input [steps, channels], got [6, 2, 1]");
  EXPECT_EQ(Error("Conv1D", {{"filters", 2}, {"kernel_size", 7}}, {6, 2}),
            "layer \"l\" (Conv1D): input [6, 2] is smaller than the 7-step kernel");
  EXPECT_NE(Error("Conv2D", {{"filters", 2}, {"kernel_size", 3}, {"padding", "causal"}}, {6, 6, 1})
                .find("padding"),
            std::string::npos);
}

TEST(Pooling1D, PoolsWindowsOfStepsAndGlobalPoolingReducesTheSteps) {
  const Tensor x = Tensor::FromVector({1, 5, 2}, {1, 10, 3, 20, 2, 30, 5, 40, 4, 50});
  auto max = Built("MaxPooling1D", {}, {{5, 2}});
  EXPECT_EQ(max->Call({Var(x)}, {})[0].value().ToVector(), (std::vector<float>{3, 20, 5, 40}));
  auto avg = Built("AveragePooling1D", {{"pool_size", 2}, {"padding", "same"}}, {{5, 2}});
  EXPECT_EQ(avg->Call({Var(x)}, {})[0].value().ToVector(),
            (std::vector<float>{2, 15, 3.5f, 35, 4, 50}));
  auto gmax = Built("GlobalMaxPooling1D", {}, {{5, 2}});
  EXPECT_EQ(gmax->Call({Var(x)}, {})[0].value().ToVector(), (std::vector<float>{5, 50}));
  auto gavg = Built("GlobalAveragePooling1D", {{"keepdims", true}}, {{5, 2}});
  EXPECT_EQ(OutShape("GlobalAveragePooling1D", {{"keepdims", true}}, {5, 2}), (Shape{1, 2}));
  EXPECT_EQ(gavg->Call({Var(x)}, {})[0].value().ToVector(), (std::vector<float>{3, 30}));
  EXPECT_EQ(Error("MaxPooling1D", {{"pool_size", {2, 2}}}, {5, 2}),
            "pool_size must be 1 integer for a 1-D pooling, got [2,2]");
  EXPECT_EQ(Error("MaxPooling1D", json::object(), {5}),
            "layer \"l\" (MaxPooling1D): expects rank-2 input [steps, channels], got [5]");
  std::mt19937_64 rng(3);
  for (auto& l : {std::move(avg), std::move(gavg)}) {
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; },
                         {RandomTensor({2, 5, 2}, rng)});
  }
}

}  // namespace
}  // namespace edl::nn::layers
