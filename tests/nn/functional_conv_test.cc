#include <gtest/gtest.h>

#include <cmath>
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
      {RandomTensor({2, 4, 4, 2}, rng), RandomTensor({3, 3, 2, 3}, rng), RandomTensor({3}, rng)});
}

TEST(Conv2D, GradientsMatchWithStridesSamePaddingAndNoBias) {
  std::mt19937_64 rng(2);
  tensor::Conv2DParams p;
  p.strides = {2, 2};
  p.padding = tensor::ComputePadding(tensor::Padding::kSame, 5, 5, 3, 3, p.strides, p.dilations);
  ExpectGradientsMatch([p](auto& v) { return fn::Conv2D(v[0], v[1], Var(), p); },
                       {RandomTensor({1, 5, 5, 2}, rng), RandomTensor({3, 3, 2, 2}, rng)});
}

TEST(Conv2D, GradientsMatchWithDilation) {
  std::mt19937_64 rng(3);
  tensor::Conv2DParams p;
  p.dilations = {2, 2};
  ExpectGradientsMatch(
      [p](auto& v) { return fn::Conv2D(v[0], v[1], v[2], p); },
      {RandomTensor({1, 5, 5, 1}, rng), RandomTensor({2, 2, 1, 2}, rng), RandomTensor({2}, rng)});
}

TEST(Conv2DTranspose, IsTheAdjointOfConv2D) {
  // <conv(a, w), b> == <a, conv^T(b, w)> for any a, b.
  std::mt19937_64 rng(5);
  tensor::Conv2DParams p;
  p.strides = {2, 2};
  p.padding = tensor::ComputePadding(tensor::Padding::kSame, 6, 5, 3, 3, p.strides, p.dilations);
  const Tensor a = RandomTensor({2, 6, 5, 2}, rng), w = RandomTensor({3, 3, 2, 4}, rng);
  const Tensor conv = fn::Conv2D(Var(a), Var(w), Var(), p).value();
  const Tensor b = RandomTensor(conv.shape(), rng);
  const Tensor back = fn::Conv2DTranspose(Var(b), Var(w), a.shape(), p).value();
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < conv.numel(); ++i) lhs += double(conv.f32()[i]) * b.f32()[i];
  for (int64_t i = 0; i < a.numel(); ++i) rhs += double(a.f32()[i]) * back.f32()[i];
  EXPECT_NEAR(lhs, rhs, 1e-3 * std::abs(lhs) + 1e-3);
}

TEST(Conv2DTranspose, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(6);
  tensor::Conv2DParams valid;
  ExpectGradientsMatch(
      [valid](auto& v) {
        return fn::Conv2DTranspose(v[0], v[1], {2, 5, 4, 3}, valid);
      },
      {RandomTensor({2, 3, 2, 2}, rng), RandomTensor({3, 3, 3, 2}, rng)});
  tensor::Conv2DParams strided;
  strided.strides = {2, 2};
  strided.padding = tensor::ComputePadding(tensor::Padding::kSame, 4, 6, 3, 3, strided.strides,
                                           strided.dilations);
  ExpectGradientsMatch(
      [strided](auto& v) {
        return fn::Conv2DTranspose(v[0], v[1], {1, 4, 6, 2}, strided);
      },
      {RandomTensor({1, 2, 3, 3}, rng), RandomTensor({3, 3, 2, 3}, rng)});
}

TEST(Pool2D, MaxPoolGradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(4);
  tensor::Pool2DParams p;
  ExpectGradientsMatch([p](auto& v) { return fn::Pool2D(tensor::PoolKind::kMax, v[0], p); },
                       {RandomTensor({2, 4, 4, 2}, rng)});
}

TEST(Pool2D, AvgPoolGradientsMatchWithPadding) {
  std::mt19937_64 rng(5);
  tensor::Pool2DParams p;
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.padding = {1, 1, 1, 1};
  ExpectGradientsMatch([p](auto& v) { return fn::Pool2D(tensor::PoolKind::kAvg, v[0], p); },
                       {RandomTensor({1, 5, 5, 2}, rng)});
}

}  // namespace
}  // namespace edl::nn
