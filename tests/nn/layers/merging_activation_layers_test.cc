// Subtract, Average, Maximum, Minimum, LeakyReLU, ELU and PReLU: what they
// compute, their gradients (finite differences, on the reference and oneDNN
// backends), their weights, and config errors that name the field.
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
using testing::GradCheckOptions;
using testing::RandomTensor;

std::unique_ptr<Layer> Built(const std::string& cls, const json& config,
                             const std::vector<Shape>& in) {
  return layer_testing::BuiltLayer(cls, config, in);
}

std::string Error(const std::string& cls, const json& config, const std::vector<Shape>& in) {
  return layer_testing::LayerError(cls, config, in);
}

std::vector<float> Apply(Layer& l, const std::vector<Tensor>& xs) {
  std::vector<Var> in;
  for (const Tensor& x : xs) in.push_back(Var(x));
  return l.Call(in, {})[0].value().ToVector();
}

const Tensor kA = Tensor::FromVector({1, 3}, {1, -2, 3});
const Tensor kB = Tensor::FromVector({1, 3}, {0.5f, 4, -1});
const Tensor kC = Tensor::FromVector({1, 3}, {2, 0, 1});

TEST(Merging, SubtractAverageMaximumAndMinimumComputeElementwise) {
  EXPECT_EQ(Apply(*Built("Subtract", {}, {{3}, {3}}), {kA, kB}), (std::vector<float>{0.5f, -6, 4}));
  const std::vector<float> avg = Apply(*Built("Average", {}, {{3}, {3}, {3}}), {kA, kB, kC});
  const std::vector<float> want = {3.5f / 3, 2.f / 3, 1};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(avg[i], want[i], 1e-6) << i;
  EXPECT_EQ(Apply(*Built("Maximum", {}, {{3}, {3}, {3}}), {kA, kB, kC}),
            (std::vector<float>{2, 4, 3}));
  EXPECT_EQ(Apply(*Built("Minimum", {}, {{3}, {3}}), {kA, kB}), (std::vector<float>{0.5f, -2, -1}));
  // Broadcasting between inputs of equal rank, as Add.
  EXPECT_EQ(Apply(*Built("Maximum", {}, {{3}, {1}}), {kA, Tensor::FromVector({1, 1}, {0})}),
            (std::vector<float>{1, 0, 3}));
}

TEST(Merging, SubtractTakesExactlyTwoInputsAndTheOthersAtLeastTwo) {
  EXPECT_EQ(Error("Subtract", {}, {{3}, {3}, {3}}),
            "layer \"l\" (Subtract): expects exactly 2 inputs, got 3");
  EXPECT_EQ(Error("Average", {}, {{3}}), "layer \"l\" (Average): expects at least 2 inputs, got 1");
  EXPECT_EQ(Error("Minimum", {}, {{3}, {4}}),
            "layer \"l\" (Minimum): input shapes [3] and [4] are not compatible");
}

TEST(Merging, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(3);
  // Inputs apart from each other, so no ties for Maximum and Minimum.
  const Tensor a = RandomTensor({2, 5}, rng, -1, 1);
  Tensor b = a.Clone(), c = a.Clone();
  for (int64_t i = 0; i < a.numel(); ++i) {
    b.f32()[i] = a.f32()[i] + ((i % 2) ? 0.3f : -0.4f);
    c.f32()[i] = a.f32()[i] + ((i % 3) ? -0.25f : 0.35f);
  }
  for (const char* cls : {"Subtract", "Average", "Maximum", "Minimum"}) {
    SCOPED_TRACE(cls);
    const bool two = std::string(cls) == "Subtract";
    auto l = Built(cls, {}, two ? std::vector<Shape>{{5}, {5}} : std::vector<Shape>{{5}, {5}, {5}});
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; },
                         two ? std::vector<Tensor>{a, b} : std::vector<Tensor>{a, b, c});
  }
}

TEST(Dot, TakesPerSampleDotProductsOfVectorsAndBatchedMatrixProducts) {
  const Tensor u = Tensor::FromVector({1, 3}, {1, 2, 3});
  const Tensor v = Tensor::FromVector({1, 3}, {4, 5, 6});
  EXPECT_EQ(Apply(*Built("Dot", {{"axes", 1}}, {{3}, {3}}), {u, v}), (std::vector<float>{32}));
  const std::vector<float> cos =
      Apply(*Built("Dot", {{"axes", -1}, {"normalize", true}}, {{3}, {3}}), {u, v});
  EXPECT_NEAR(cos[0], 32 / std::sqrt(14.0 * 77.0), 1e-6);
  // [2, 3] . [3, 2] along (2, 1): a matrix product per sample.
  const Tensor x = Tensor::FromVector({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = Tensor::FromVector({1, 3, 2}, {1, 0, 0, 1, 1, 1});
  auto mm = Built("Dot", {{"axes", {2, 1}}}, {{2, 3}, {3, 2}});
  EXPECT_EQ(Apply(*mm, {x, y}), (std::vector<float>{4, 5, 10, 11}));
  // Along (1, 1): x^T y, [3, 2] . [2, 2] -> [3, 2].
  const Tensor z = Tensor::FromVector({1, 2, 2}, {1, 0, 0, 1});
  auto tm = Built("Dot", {{"axes", 1}}, {{2, 3}, {2, 2}});
  EXPECT_EQ(Apply(*tm, {x, z}), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Dot, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(9);
  struct Case {
    json config;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {{{"axes", 1}, {"normalize", true}}, {{4}, {4}}},
      {{{"axes", {2, 1}}}, {{2, 3}, {3, 4}}},
      {{{"axes", {1, 2}}}, {{3, 2}, {4, 3}}},
      {{{"axes", 1}}, {{3, 2}, {3, 4}}},
      {{{"axes", 2}}, {{2, 3}, {4, 3}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config.dump());
    auto l = Built("Dot", c.config, c.shapes);
    std::vector<Tensor> in;
    for (Shape s : c.shapes) {
      s.insert(s.begin(), 2);
      in.push_back(RandomTensor(s, rng, -1, 1, 0.1f));
    }
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; }, in);
  }
}

TEST(Dot, RefusesBadAxesAndShapesNamingThem) {
  EXPECT_EQ(Error("Dot", {}, {{3}, {3}}), "axes is required");
  EXPECT_EQ(Error("Dot", {{"axes", 0}}, {{3}, {3}}), "axes cannot contract the batch axis (0)");
  EXPECT_EQ(Error("Dot", {{"axes", {1, 2, 3}}}, {{3}, {3}}),
            "axes must be one integer or a list of two, got [1,2,3]");
  EXPECT_EQ(Error("Dot", {{"axes", 1}}, {{3}, {4}}),
            "layer \"l\" (Dot): cannot take the dot product of [3] and [4] along axes 1 and 1 "
            "(3 != 4)");
  EXPECT_EQ(Error("Dot", {{"axes", 3}}, {{2, 3}, {2, 3}}),
            "layer \"l\" (Dot): axes 3 is out of range for input [2, 3]");
  EXPECT_EQ(Error("Dot", {{"axes", 1}}, {{2, 2, 2}, {2, 2, 2}}),
            "layer \"l\" (Dot): supports two inputs of rank 1 or both of rank 2 (without the "
            "batch axis), got [2, 2, 2] and [2, 2, 2]");
}

TEST(AdvancedActivations, ThresholdedReLUPassesOnlyWhatExceedsTheta) {
  const Tensor x = Tensor::FromVector({1, 4}, {-1, 0.5f, 0.7f, 2});
  EXPECT_EQ(Apply(*Built("ThresholdedReLU", {{"theta", 0.6}}, {{4}}), {x}),
            (std::vector<float>{0, 0, 0.7f, 2}));
  EXPECT_EQ(Apply(*Built("ThresholdedReLU", {}, {{4}}), {x}), (std::vector<float>{0, 0, 0, 2}));
  EXPECT_EQ(Error("ThresholdedReLU", {{"theta", -0.1}}, {{4}}), "theta must be >= 0");
  std::mt19937_64 rng(2);
  Tensor away = RandomTensor({3, 4}, rng, -2, 2);
  for (int64_t i = 0; i < away.numel(); ++i) {
    if (std::abs(away.f32()[i] - 0.6f) < 0.05f) away.f32()[i] += 0.1f;
  }
  auto l = Built("ThresholdedReLU", {{"theta", 0.6}}, {{4}});
  ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; }, {away});
}

TEST(AdvancedActivations, SoftsignAndMishActivationsComputeAndDifferentiate) {
  const Tensor x = Tensor::FromVector({1, 3}, {-2, 0.5f, 3});
  const std::vector<float> soft =
      Apply(*Built("Activation", {{"activation", "softsign"}}, {{3}}), {x});
  const std::vector<float> mish = Apply(*Built("Activation", {{"activation", "mish"}}, {{3}}), {x});
  for (int i = 0; i < 3; ++i) {
    const double v = x.f32()[i];
    EXPECT_NEAR(soft[i], v / (1 + std::abs(v)), 1e-6);
    EXPECT_NEAR(mish[i], v * std::tanh(std::log1p(std::exp(v))), 1e-5);
  }
  std::mt19937_64 rng(12);
  for (const char* name : {"softsign", "mish"}) {
    SCOPED_TRACE(name);
    auto l = Built("Activation", {{"activation", name}}, {{4}});
    EXPECT_EQ(l->Config()["activation"], name);
    ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; },
                         {RandomTensor({3, 4}, rng, -2, 2, 0.1f)});
  }
}

TEST(AdvancedActivations, LeakyReLUReadsAlphaOrKeras3sNegativeSlope) {
  const Tensor x = Tensor::FromVector({1, 3}, {-2, 0, 3});
  EXPECT_EQ(Apply(*Built("LeakyReLU", {}, {{3}}), {x}), (std::vector<float>{-0.6f, 0, 3}));
  EXPECT_EQ(Apply(*Built("LeakyReLU", {{"alpha", 0.5}}, {{3}}), {x}),
            (std::vector<float>{-1, 0, 3}));
  EXPECT_EQ(Apply(*Built("LeakyReLU", {{"negative_slope", 0.25}}, {{3}}), {x}),
            (std::vector<float>{-0.5f, 0, 3}));
  EXPECT_EQ(Error("LeakyReLU", {{"negative_slope", -1}}, {{3}}), "negative_slope must be >= 0");
  EXPECT_EQ(Built("LeakyReLU", {{"negative_slope", 0.25}}, {{3}})->Config()["alpha"], 0.25);
}

TEST(AdvancedActivations, EluIsAlphaTimesExpMinusOneBelowZero) {
  const Tensor x = Tensor::FromVector({1, 3}, {-2, 0.5f, 3});
  const std::vector<float> y = Apply(*Built("ELU", {{"alpha", 0.5}}, {{3}}), {x});
  EXPECT_NEAR(y[0], 0.5 * (std::exp(-2.0) - 1), 1e-6);
  EXPECT_EQ(y[1], 0.5f);
  EXPECT_EQ(y[2], 3.f);
}

TEST(AdvancedActivations, PReLULearnsASlopePerElementSharedAlongSharedAxes) {
  auto p = Built("PReLU", {{"name", "p"}}, {{3, 5}});
  ASSERT_EQ(p->weights().size(), 1u);
  EXPECT_EQ(p->weights()[0]->name, "p/alpha");
  EXPECT_EQ(p->weights()[0]->value.shape(), (Shape{3, 5}));
  EXPECT_EQ(p->weights()[0]->value.ToVector(), std::vector<float>(15, 0.f));  // zeros
  auto shared = Built("PReLU", {{"shared_axes", {1}}}, {{3, 5}});
  EXPECT_EQ(shared->weights()[0]->value.shape(), (Shape{1, 5}));
  EXPECT_EQ(Built("PReLU", {{"shared_axes", 2}}, {{3, 5}})->weights()[0]->value.shape(),
            (Shape{3, 1}));

  auto l = Built("PReLU", {}, {{2}});
  l->weights()[0]->value.CopyFrom(Tensor::FromVector({2}, {0.1f, 2}));
  EXPECT_EQ(Apply(*l, {Tensor::FromVector({2, 2}, {-1, -1, 3, 4})}),
            (std::vector<float>{-0.1f, -2, 3, 4}));
}

TEST(AdvancedActivations, PReLUGradientsMatchFiniteDifferencesForInputAndSlope) {
  std::mt19937_64 rng(5);
  auto l = Built("PReLU", {{"shared_axes", {1}}}, {{3, 4}});
  Parameter& alpha = *l->weights()[0];
  alpha.value.CopyFrom(RandomTensor({1, 4}, rng, -0.5, 0.5));
  const Tensor x = RandomTensor({2, 3, 4}, rng, -1, 1, /*min_abs=*/0.1f);
  GradCheckOptions o;
  ExpectGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {})[0]; }, {x}, o);

  // The slope: d sum(seed * y) / d alpha against central differences.
  const Tensor seed = RandomTensor({2, 3, 4}, rng);
  alpha.ZeroGrad();
  Backward(l->Call({Var(x)}, {})[0], seed);
  const Tensor analytic = alpha.grad.Clone();
  for (int64_t k = 0; k < alpha.value.numel(); ++k) {
    const float saved = alpha.value.f32()[k];
    NoGradGuard guard;
    alpha.value.f32()[k] = saved + 1e-3f;
    const double plus = testing::WeightedSum(l->Call({Var(x)}, {})[0].value(), seed);
    alpha.value.f32()[k] = saved - 1e-3f;
    const double minus = testing::WeightedSum(l->Call({Var(x)}, {})[0].value(), seed);
    alpha.value.f32()[k] = saved;
    EXPECT_NEAR(analytic.f32()[k], (plus - minus) / 2e-3, 2e-3) << "alpha " << k;
  }
}

TEST(AdvancedActivations, PReLURefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(Error("PReLU", {{"shared_axes", {0}}}, {{3}}),
            "shared_axes counts axes from 1 (0 is the batch axis), got 0");
  EXPECT_EQ(Error("PReLU", {{"shared_axes", {3}}}, {{4, 5}}),
            "layer \"l\" (PReLU): shared_axes 3 is out of range for input [4, 5]");
  EXPECT_NE(Error("PReLU", {{"alpha_constraint", {{"class_name", "NonNeg"}}}}, {{3}})
                .find("alpha_constraint"),
            std::string::npos);
  EXPECT_NE(Error("PReLU", {{"shared_axes", "all"}}, {{3}}).find("shared_axes"), std::string::npos);
}

}  // namespace
}  // namespace edl::nn::layers
