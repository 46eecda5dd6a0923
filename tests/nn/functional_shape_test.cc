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

TEST(Reshape, GradientTakesTheInputShapeBack) {
  std::mt19937_64 rng(1);
  ExpectGradientsMatch(
      [](auto& v) {
        return fn::Reshape(v[0], {3, -1});
      },
      {RandomTensor({2, 6}, rng)});
}

TEST(Concat, GradientsSplitAlongTheAxis) {
  std::mt19937_64 rng(2);
  ExpectGradientsMatch(
      [](auto& v) {
        return fn::Concat({v[0], v[1]}, 0);
      },
      {RandomTensor({1, 3}, rng), RandomTensor({2, 3}, rng)});
  ExpectGradientsMatch(
      [](auto& v) {
        return fn::Concat({v[0], v[1], v[0]}, -1);
      },
      {RandomTensor({2, 1}, rng), RandomTensor({2, 3}, rng)});
}

TEST(Slice, KeepsARangeAlongAnAxisAndItsGradientPadsWithZeros) {
  const Tensor x = Tensor::FromVector({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(fn::Slice(Var(x), 1, 1, 2).value().ToVector(), (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(fn::Slice(Var(x), -1, 0, 3).value().ToVector(), (std::vector<float>{0, 1, 2, 4, 5, 6}));
  EXPECT_EQ(fn::Slice(Var(x), 0, 1, 1).value().ToVector(), (std::vector<float>{4, 5, 6, 7}));
  std::mt19937_64 rng(4);
  for (auto [begin, size] : {std::pair<int64_t, int64_t>{0, 2}, {1, 2}, {2, 3}, {0, 5}}) {
    ExpectGradientsMatch([begin, size](auto& v) { return fn::Slice(v[0], 2, begin, size); },
                         {RandomTensor({2, 3, 5}, rng)});
  }
}

TEST(Concat, AcceptsConstantPieces) {
  std::mt19937_64 rng(2);
  Tensor c = RandomTensor({2, 2}, rng);
  ExpectGradientsMatch(
      [c](auto& v) {
        return fn::Concat({Var(c), v[0]}, 1);
      },
      {RandomTensor({2, 3}, rng)});
}

struct ReduceCase {
  Reduce kind;
  std::vector<int> axes;
  bool keepdims;
};

class ReduceGradient : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceGradient, MatchesFiniteDifferences) {
  const ReduceCase c = GetParam();
  std::mt19937_64 rng(4);
  // Distinct values, so max/min have no ties.
  Tensor x = RandomTensor({2, 3, 4}, rng);
  ExpectGradientsMatch([c](auto& v) { return fn::ReduceOp(c.kind, v[0], c.axes, c.keepdims); },
                       {x});
}

INSTANTIATE_TEST_SUITE_P(
    KindsAndAxes, ReduceGradient,
    ::testing::Values(ReduceCase{Reduce::kSum, {1}, false}, ReduceCase{Reduce::kSum, {0, 2}, true},
                      ReduceCase{Reduce::kMean, {-1}, false}, ReduceCase{Reduce::kMean, {}, false},
                      ReduceCase{Reduce::kMax, {1}, false}, ReduceCase{Reduce::kMax, {0, 2}, true},
                      ReduceCase{Reduce::kMin, {2}, false}));

TEST(ReduceMax, SplitsTheGradientBetweenTies) {
  Parameter p;
  p.value = Tensor::FromVector({4}, {1.f, 3.f, 3.f, 2.f});
  Backward(fn::ReduceOp(Reduce::kMax, Use(p), {0}));
  EXPECT_EQ(p.grad.ToVector(), (std::vector<float>{0.f, 0.5f, 0.5f, 0.f}));
}

TEST(SumAndMean, ReduceEverythingToAScalar) {
  std::mt19937_64 rng(8);
  Var s = fn::Sum(Var(Tensor::Full({2, 3}, 2.f)));
  EXPECT_EQ(s.value().numel(), 1);
  EXPECT_FLOAT_EQ(s.value().item(), 12.f);
  EXPECT_FLOAT_EQ(fn::Mean(Var(Tensor::Full({2, 3}, 2.f))).value().item(), 2.f);
  ExpectGradientsMatch([](auto& v) { return fn::Sum(v[0]); }, {RandomTensor({2, 3}, rng)});
  ExpectGradientsMatch([](auto& v) { return fn::Mean(v[0]); }, {RandomTensor({2, 3}, rng)});
}

}  // namespace
}  // namespace edl::nn
