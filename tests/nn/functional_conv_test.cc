#include <gtest/gtest.h>

#include <random>

#include "nn/functional.h"
#include "tests/nn/gradient_check.h"

namespace edl::nn {
namespace {

using testing::ExpectGradientsMatch;
using testing::RandomTensor;

TEST(Conv2D, GradientsMatchWithValidPaddingAndBias) {
  std::mt19937_64 rng(1);
  tensor::Conv2DParams p;
  ExpectGradientsMatch(
      [p](auto& v) { return fn::Conv2D(v[0], v[1], v[2], p); },
      {RandomTensor({2, 4, 4, 2}, rng), RandomTensor({3, 3, 2, 3}, rng),
       RandomTensor({3}, rng)});
}

TEST(Conv2D, GradientsMatchWithStridesSamePaddingAndNoBias) {
  std::mt19937_64 rng(2);
  tensor::Conv2DParams p;
  p.strides = {2, 2};
  p.padding = tensor::ComputePadding(tensor::Padding::kSame, 5, 5, 3, 3,
                                     p.strides, p.dilations);
  ExpectGradientsMatch(
      [p](auto& v) { return fn::Conv2D(v[0], v[1], Var(), p); },
      {RandomTensor({1, 5, 5, 2}, rng), RandomTensor({3, 3, 2, 2}, rng)});
}

TEST(Conv2D, GradientsMatchWithDilation) {
  std::mt19937_64 rng(3);
  tensor::Conv2DParams p;
  p.dilations = {2, 2};
  ExpectGradientsMatch(
      [p](auto& v) { return fn::Conv2D(v[0], v[1], v[2], p); },
      {RandomTensor({1, 5, 5, 1}, rng), RandomTensor({2, 2, 1, 2}, rng),
       RandomTensor({2}, rng)});
}

TEST(Pool2D, MaxPoolGradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(4);
  tensor::Pool2DParams p;
  ExpectGradientsMatch(
      [p](auto& v) { return fn::Pool2D(tensor::PoolKind::kMax, v[0], p); },
      {RandomTensor({2, 4, 4, 2}, rng)});
}

TEST(Pool2D, AvgPoolGradientsMatchWithPadding) {
  std::mt19937_64 rng(5);
  tensor::Pool2DParams p;
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.padding = {1, 1, 1, 1};
  ExpectGradientsMatch(
      [p](auto& v) { return fn::Pool2D(tensor::PoolKind::kAvg, v[0], p); },
      {RandomTensor({1, 5, 5, 2}, rng)});
}

}  // namespace
}  // namespace edl::nn
