#include <gtest/gtest.h>

#include <random>

#include "nn/functional.h"
#include "tests/nn/gradient_check.h"

namespace edl::nn {
namespace {

using tensor::Eltwise;
using tensor::Reduce;
using testing::ExpectGradientsMatch;
using testing::RandomTensor;

struct ActivationCase {
  Eltwise kind;
  float alpha, beta;
  float lo, hi;  // input range, away from kinks and outside domains
};

class ActivationGradient : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(ActivationGradient, MatchesFiniteDifferences) {
  const ActivationCase c = GetParam();
  std::mt19937_64 rng(3);
  Tensor x = RandomTensor({2, 5}, rng, c.lo, c.hi, 0.05f);
  if (c.kind == Eltwise::kClip) {
    // Keep away from the clip bounds.
    for (int64_t i = 0; i < x.numel(); ++i) {
      float& v = x.f32()[i];
      if (std::abs(v - c.alpha) < 0.05f || std::abs(v - c.beta) < 0.05f) v += 0.1f;
    }
  }
  ExpectGradientsMatch([c](auto& v) { return fn::Activation(c.kind, v[0], c.alpha, c.beta); }, {x});
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, ActivationGradient,
    ::testing::Values(
        ActivationCase{Eltwise::kRelu, 0, 0, -1, 1}, ActivationCase{Eltwise::kRelu, 0.1f, 0, -1, 1},
        ActivationCase{Eltwise::kSigmoid, 0, 0, -3, 3}, ActivationCase{Eltwise::kTanh, 0, 0, -2, 2},
        ActivationCase{Eltwise::kGelu, 0, 0, -2, 2},
        ActivationCase{Eltwise::kGeluTanh, 0, 0, -2, 2},
        ActivationCase{Eltwise::kElu, 1.f, 0, -2, 2}, ActivationCase{Eltwise::kSelu, 0, 0, -2, 2},
        ActivationCase{Eltwise::kSoftplus, 0, 0, -2, 2},
        ActivationCase{Eltwise::kSwish, 0, 0, -2, 2},
        ActivationCase{Eltwise::kLinear, 1.5f, 0.5f, -2, 2},
        ActivationCase{Eltwise::kExp, 0, 0, -1, 1}, ActivationCase{Eltwise::kLog, 0, 0, 0.5f, 2},
        ActivationCase{Eltwise::kSqrt, 0, 0, 0.5f, 2},
        ActivationCase{Eltwise::kSquare, 0, 0, -2, 2}, ActivationCase{Eltwise::kAbs, 0, 0, -2, 2},
        ActivationCase{Eltwise::kClip, -0.5f, 0.5f, -1, 1}),
    [](const ::testing::TestParamInfo<ActivationCase>& info) {
      return std::string(tensor::EltwiseName(info.param.kind)) + "_" + std::to_string(info.index);
    });

TEST(Softmax, GradientsMatchFiniteDifferencesOnEitherAxis) {
  std::mt19937_64 rng(5);
  ExpectGradientsMatch([](auto& v) { return fn::Softmax(v[0]); },
                       {RandomTensor({3, 4}, rng, -2, 2)});
  ExpectGradientsMatch([](auto& v) { return fn::Softmax(v[0], 0); },
                       {RandomTensor({3, 4}, rng, -2, 2)});
}

TEST(LogSoftmax, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(6);
  ExpectGradientsMatch([](auto& v) { return fn::LogSoftmax(v[0]); },
                       {RandomTensor({3, 4}, rng, -2, 2)});
}

TEST(Dropout, ZeroesAboutRateOfTheElementsAndScalesTheRest) {
  std::mt19937_64 rng(9);
  Var y = fn::Dropout(Var(Tensor::Full({100, 100}, 1.f)), 0.3f, rng, true);
  int64_t zeros = 0;
  for (float v : y.value().ToVector()) {
    if (v == 0.f) {
      ++zeros;
    } else {
      EXPECT_FLOAT_EQ(v, 1.f / 0.7f);
    }
  }
  EXPECT_NEAR(zeros / 10000.0, 0.3, 0.02);
}

TEST(Dropout, SuccessiveCallsDropDifferentUnitsAndEqualSeedsTheSame) {
  std::mt19937_64 rng(9), same(9);
  const Var x(Tensor::Full({64, 64}, 1.f));
  const std::vector<float> first = fn::Dropout(x, 0.5f, rng, true).value().ToVector();
  const std::vector<float> second = fn::Dropout(x, 0.5f, rng, true).value().ToVector();
  EXPECT_NE(first, second);
  EXPECT_EQ(fn::Dropout(x, 0.5f, same, true).value().ToVector(), first);
}

TEST(Dropout, IsTheIdentityOutsideTraining) {
  std::mt19937_64 rng(9);
  Tensor x = Tensor::Full({4}, 2.f);
  Var y = fn::Dropout(Var(x), 0.5f, rng, false);
  EXPECT_TRUE(y.value().SharesStorageWith(x));
}

TEST(Dropout, GradientUsesTheSameMaskAsTheForwardPass) {
  std::mt19937_64 data_rng(1);
  ExpectGradientsMatch(
      [](auto& v) {
        std::mt19937_64 rng(11);  // the same mask on every evaluation
        return fn::Dropout(v[0], 0.5f, rng, true);
      },
      {RandomTensor({4, 4}, data_rng)});
}

}  // namespace
}  // namespace edl::nn
