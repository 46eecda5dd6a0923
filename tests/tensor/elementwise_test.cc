// Elementwise, broadcasting and reductions: CPU backend vs reference, and the
// reference against known values.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/tensor/backend_compare.h"

namespace edl::tensor {
namespace {

using testing::Close;
using testing::ExpectBackendsAgree;
using testing::Random;

struct EltwiseCase {
  Eltwise kind;
  float alpha, beta, lo, hi;
};

const EltwiseCase kEltwiseCases[] = {
    {Eltwise::kRelu, 0.f, 0.f, -3, 3}, {Eltwise::kRelu, 0.2f, 0.f, -3, 3},
    {Eltwise::kSigmoid, 0, 0, -6, 6},  {Eltwise::kTanh, 0, 0, -4, 4},
    {Eltwise::kGelu, 0, 0, -4, 4},     {Eltwise::kGeluTanh, 0, 0, -4, 4},
    {Eltwise::kElu, 1.f, 0, -3, 3},    {Eltwise::kElu, 0.5f, 0, -3, 3},
    {Eltwise::kSelu, 0, 0, -3, 3},     {Eltwise::kSoftplus, 0, 0, -8, 8},
    {Eltwise::kSwish, 0, 0, -5, 5},    {Eltwise::kLinear, 2.5f, -1.f, -3, 3},
    {Eltwise::kExp, 0, 0, -4, 4},      {Eltwise::kLog, 0, 0, 0.1f, 5},
    {Eltwise::kSqrt, 0, 0, 0.1f, 5},   {Eltwise::kSquare, 0, 0, -3, 3},
    {Eltwise::kAbs, 0, 0, -3, 3},      {Eltwise::kClip, -0.5f, 0.7f, -2, 2},
};

TEST(Eltwise, CpuForwardAndBackwardMatchTheReferenceForEveryKind) {
  for (const EltwiseCase& c : kEltwiseCases) {
    SCOPED_TRACE(EltwiseName(c.kind));
    for (Shape shape : {Shape{1}, Shape{7, 13}, Shape{3, 5, 4, 33}}) {
      Tensor x = Random(shape, 1, c.lo, c.hi);
      Tensor dy = Random(shape, 2);
      ExpectBackendsAgree(
          [&] {
            return std::vector<Tensor>{EltwiseForward(c.kind, x, c.alpha, c.beta),
                                       EltwiseBackward(c.kind, dy, x, c.alpha, c.beta)};
          },
          2e-4f, 2e-5f);
    }
  }
}

TEST(Eltwise, ReferenceMatchesKerasDefinitions) {
  ScopedBackend scope(ReferenceBackend());
  Tensor x = Tensor::FromVector({3}, {-1.f, 0.f, 2.f});
  auto at = [&](Eltwise k, int i, float alpha = 0.f) {
    return EltwiseForward(k, x, alpha).ToVector()[i];
  };
  EXPECT_NEAR(at(Eltwise::kGelu, 2), 1.9544997f, 1e-6);
  EXPECT_NEAR(at(Eltwise::kGelu, 0), -0.15865525f, 1e-6);
  EXPECT_NEAR(at(Eltwise::kSelu, 0),
              1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1.0), 1e-6);
  EXPECT_NEAR(at(Eltwise::kSelu, 2), 2 * 1.0507009873554805, 1e-6);
  EXPECT_NEAR(at(Eltwise::kSoftplus, 1), std::log(2.0), 1e-6);
  EXPECT_NEAR(at(Eltwise::kSwish, 2), 2.0 / (1.0 + std::exp(-2.0)), 1e-6);
  EXPECT_NEAR(at(Eltwise::kElu, 0, 0.5f), 0.5 * (std::exp(-1.0) - 1.0), 1e-6);
  EXPECT_EQ(at(Eltwise::kRelu, 0, 0.1f), -0.1f);
}

TEST(Eltwise, ClipPassesTheGradientAtItsBoundsAsTensorFlow) {
  Tensor x = Tensor::FromVector({4}, {-1.f, 0.f, 6.f, 7.f});
  Tensor dy = Tensor::Full({4}, 1.f);
  for (Backend* b : {&CpuBackend(), &ReferenceBackend()}) {
    ScopedBackend scope(*b);
    EXPECT_EQ(EltwiseBackward(Eltwise::kClip, dy, x, 0.f, 6.f).ToVector(),
              (std::vector<float>{0, 1, 1, 0}))
        << b->name();
  }
}

TEST(Eltwise, EmptyTensorsGiveEmptyResults) {
  Tensor x = Tensor::Zeros({0, 4});
  EXPECT_EQ(EltwiseForward(Eltwise::kRelu, x).shape(), (Shape{0, 4}));
  EXPECT_EQ(Add(x, Tensor::Zeros({4})).shape(), (Shape{0, 4}));
}

TEST(Binary, CpuMatchesTheReferenceOnBroadcastPatterns) {
  const std::pair<Shape, Shape> patterns[] = {
      {{5, 7}, {5, 7}},
      {{5, 7}, {7}},
      {{7}, {5, 7}},
      {{5, 7}, {}},
      {{}, {5, 7}},
      {{5, 1}, {1, 7}},
      {{2, 3, 4, 5}, {3, 1, 5}},
      {{3, 1, 5}, {2, 3, 4, 5}},
      {{6, 1}, {6, 9}},
      {{1}, {1}},
      {{4, 1, 3}, {4, 2, 1}},
  };
  for (Binary kind :
       {Binary::kAdd, Binary::kSub, Binary::kMul, Binary::kDiv, Binary::kMax, Binary::kMin}) {
    for (const auto& [sa, sb] : patterns) {
      SCOPED_TRACE(ShapeString(sa) + " op " + ShapeString(sb) + " kind " +
                   std::to_string(static_cast<int>(kind)));
      Tensor a = Random(sa, 3, 0.5f, 2.f), b = Random(sb, 4, 0.5f, 2.f);
      ExpectBackendsAgree([&] { return std::vector<Tensor>{BinaryOp(kind, a, b)}; });
    }
  }
}

TEST(Binary, BroadcastsAScalarAndARow) {
  Tensor a = Tensor::FromVector({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(Sub(Tensor::Scalar(10), a).ToVector(), (std::vector<float>{9, 8, 7, 6}));
  EXPECT_EQ(Div(Tensor::FromVector({2}, {2, 4}), a).ToVector(),
            (std::vector<float>{2, 2, 2.f / 3, 1}));
  EXPECT_EQ(Mul(a, Tensor::Scalar(2)).shape(), (Shape{2, 2}));
}

TEST(Binary, DiesOnIncompatibleShapes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(Add(Tensor::Zeros({2, 3}), Tensor::Zeros({4})), "broadcast");
}

TEST(Affine, CpuMatchesTheReference) {
  Tensor x = Random({100003}, 5);
  ExpectBackendsAgree([&] {
    return std::vector<Tensor>{Affine(x, -1.5f, 0.25f), Affine(x, 1.f, 0.f)};
  });
}

TEST(AddInPlace, AccumulatesScaledValues) {
  Tensor y = Tensor::FromVector({3}, {1, 2, 3});
  AddInPlace(y, Tensor::FromVector({3}, {1, 1, 1}), -2.f);
  EXPECT_EQ(y.ToVector(), (std::vector<float>{-1, 0, 1}));
  Tensor x = Random({70001}, 6);
  ExpectBackendsAgree([&] {
    Tensor z = Random({70001}, 7);
    AddInPlace(z, x, 0.5f);
    return std::vector<Tensor>{z};
  });
}

TEST(SumToShape, CpuMatchesTheReferenceAndUndoesBroadcasting) {
  const std::pair<Shape, Shape> cases[] = {
      {{64, 10}, {10}},      {{64, 10}, {64, 1}},          {{2, 3, 4, 5}, {3, 1, 5}},
      {{2, 3, 4, 5}, {}},    {{2, 3, 4, 5}, {1, 3, 1, 1}}, {{7, 5}, {7, 5}},
      {{4, 6, 6, 32}, {32}}, {{3, 1, 5}, {1, 1}},
  };
  for (const auto& [from, to] : cases) {
    SCOPED_TRACE(ShapeString(from) + " -> " + ShapeString(to));
    Tensor x = Random(from, 8);
    ExpectBackendsAgree([&] { return std::vector<Tensor>{SumToShape(x, to)}; });
  }
  Tensor ones = Tensor::Full({4, 3}, 1.f);
  EXPECT_EQ(SumToShape(ones, {3}).ToVector(), (std::vector<float>{4, 4, 4}));
}

TEST(Reduce, CpuMatchesTheReferenceOverAxes) {
  const std::vector<std::vector<int>> axes_list = {{},     {0},    {1},          {-1},
                                                   {0, 2}, {1, 3}, {0, 1, 2, 3}, {2, 3}};
  Tensor x = Random({3, 5, 4, 7}, 9);
  for (Reduce kind : {Reduce::kSum, Reduce::kMean, Reduce::kMax, Reduce::kMin}) {
    for (const auto& axes : axes_list) {
      for (bool keepdims : {false, true}) {
        ExpectBackendsAgree([&] { return std::vector<Tensor>{ReduceOp(kind, x, axes, keepdims)}; });
      }
    }
  }
}

TEST(Reduce, KeepsOrDropsReducedDimensions) {
  Tensor x = Tensor::FromVector({2, 3}, {1, 5, 3, 4, 2, 6});
  EXPECT_EQ(ReduceOp(Reduce::kMax, x, {1}).ToVector(), (std::vector<float>{5, 6}));
  EXPECT_EQ(ReduceOp(Reduce::kMin, x, {0}, true).shape(), (Shape{1, 3}));
  EXPECT_EQ(ReduceOp(Reduce::kMean, x, {}).shape(), (Shape{}));
  EXPECT_FLOAT_EQ(ReduceOp(Reduce::kMean, x, {}).item(), 3.5f);
}

TEST(Reduce, SumOfAnEmptyTensorIsZero) {
  Tensor x = Tensor::Zeros({0, 3});
  EXPECT_EQ(ReduceOp(Reduce::kSum, x, {0}).ToVector(), (std::vector<float>{0, 0, 0}));
}

}  // namespace
}  // namespace edl::tensor
