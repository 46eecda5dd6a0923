#include <gtest/gtest.h>

#include <random>

#include "nn/functional.h"
#include "tests/nn/gradient_check.h"

namespace edl::nn {
namespace {

using testing::ExpectGradientsMatch;
using testing::RandomTensor;

TEST(BatchNorm, TrainingGradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(1);
  ExpectGradientsMatch(
      [](auto& v) {
        Tensor mm = Tensor::Zeros({3}), mv = Tensor::Full({3}, 1.f);
        return fn::BatchNorm(v[0], v[1], v[2], mm, mv, 0.99f, 1e-3f, true);
      },
      {RandomTensor({4, 2, 3}, rng), RandomTensor({3}, rng, 0.5f, 1.5f), RandomTensor({3}, rng)});
}

TEST(BatchNorm, TrainingGradientsMatchWithoutScaleAndCenter) {
  std::mt19937_64 rng(2);
  ExpectGradientsMatch(
      [](auto& v) {
        Tensor mm = Tensor::Zeros({2}), mv = Tensor::Full({2}, 1.f);
        return fn::BatchNorm(v[0], Var(), Var(), mm, mv, 0.99f, 1e-3f, true);
      },
      {RandomTensor({5, 2}, rng)});
}

TEST(BatchNorm, InferenceGradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(3);
  Tensor mm = RandomTensor({3}, rng), mv = RandomTensor({3}, rng, 0.5f, 2.f);
  ExpectGradientsMatch(
      [mm, mv](auto& v) {
        Tensor m = mm, var = mv;
        return fn::BatchNorm(v[0], v[1], v[2], m, var, 0.99f, 1e-3f, false);
      },
      {RandomTensor({4, 3}, rng), RandomTensor({3}, rng), RandomTensor({3}, rng)});
}

TEST(BatchNorm, TrainingUpdatesMovingStatisticsWithUnbiasedVariance) {
  // One channel, values 1, 2, 3, 6: mean 3, biased var 3.5, unbiased 14/3.
  Tensor x = Tensor::FromVector({4, 1}, {1, 2, 3, 6});
  Tensor mm = Tensor::Zeros({1}), mv = Tensor::Full({1}, 1.f);
  Var y = fn::BatchNorm(Var(x), Var(), Var(), mm, mv, 0.9f, 0.f, true);
  EXPECT_NEAR(mm.ToVector()[0], 0.1 * 3, 1e-5);
  EXPECT_NEAR(mv.ToVector()[0], 0.9 + 0.1 * 14.0 / 3, 1e-5);
  // Training normalizes with the biased batch variance.
  EXPECT_NEAR(y.value().ToVector()[3], 3 / std::sqrt(3.5), 1e-4);
}

TEST(BatchNorm, InferenceUsesTheMovingStatistics) {
  Tensor x = Tensor::FromVector({2, 1}, {1, 3});
  Tensor mm = Tensor::Full({1}, 1.f), mv = Tensor::Full({1}, 4.f);
  Var y = fn::BatchNorm(Var(x), Var(Tensor::Full({1}, 2.f)), Var(Tensor::Full({1}, 0.5f)), mm, mv,
                        0.9f, 0.f, false);
  EXPECT_NEAR(y.value().ToVector()[0], 0.5, 1e-5);
  EXPECT_NEAR(y.value().ToVector()[1], 2 * 2 / 2.0 + 0.5, 1e-5);
  EXPECT_FLOAT_EQ(mm.ToVector()[0], 1.f);
}

TEST(LayerNorm, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(4);
  ExpectGradientsMatch(
      [](auto& v) { return fn::LayerNorm(v[0], v[1], v[2], 1e-3f); },
      {RandomTensor({3, 4}, rng), RandomTensor({4}, rng, 0.5f, 1.5f), RandomTensor({4}, rng)});
}

}  // namespace
}  // namespace edl::nn
