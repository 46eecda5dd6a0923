// Matrix products and convolution: CPU backend vs reference, and the
// reference against hand-computed values.
#include <gtest/gtest.h>

#include <thread>

#include "tests/tensor/backend_compare.h"

namespace edl::tensor {
namespace {

using testing::ExpectBackendsAgree;
using testing::Random;

TEST(MatMul, CpuMatchesTheReferenceWithEveryTranspose) {
  const int64_t m = 17, k = 33, n = 9;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor a = Random(ta ? Shape{k, m} : Shape{m, k}, 1);
      Tensor b = Random(tb ? Shape{n, k} : Shape{k, n}, 2);
      ExpectBackendsAgree([&] { return std::vector<Tensor>{MatMul(a, b, ta, tb)}; });
      Tensor a3 = Random(ta ? Shape{3, k, m} : Shape{3, m, k}, 3);
      Tensor b3 = Random(tb ? Shape{3, n, k} : Shape{3, k, n}, 4);
      ExpectBackendsAgree([&] {
        return std::vector<Tensor>{MatMul(a3, b3, ta, tb), MatMul(a3, b, ta, tb)};
      });
    }
  }
}

TEST(MatMul, MultipliesKnownMatrices) {
  Tensor a = Tensor::FromVector({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::FromVector({2, 3}, {1, 0, 1, 0, 1, 0});
  EXPECT_EQ(MatMul(a, b, false, true).ToVector(), (std::vector<float>{4, 2, 10, 5}));
  EXPECT_EQ(MatMul(a, a, true, false).shape(), (Shape{3, 3}));
}

TEST(MatMul, DiesOnMismatchedInnerDimensions) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(MatMul(Tensor::Zeros({2, 3}), Tensor::Zeros({4, 2})), "inner");
}

TEST(Dense, CpuMatchesTheReferenceWithAndWithoutBias) {
  Tensor x = Random({64, 784}, 5), w = Random({784, 128}, 6), b = Random({128}, 7);
  ExpectBackendsAgree(
      [&] {
        return std::vector<Tensor>{DenseForward(x, w, b), DenseForward(x, w, Tensor())};
      },
      2e-4f, 1e-4f);
  Tensor x3 = Random({2, 5, 7}, 8), w3 = Random({7, 3}, 9), b3 = Random({3}, 10);
  ExpectBackendsAgree([&] { return std::vector<Tensor>{DenseForward(x3, w3, b3)}; });
  EXPECT_EQ(DenseForward(x3, w3, b3).shape(), (Shape{2, 5, 3}));
}

TEST(Dense, EmptyBatchGivesEmptyOutput) {
  Tensor y = DenseForward(Tensor::Zeros({0, 4}), Tensor::Zeros({4, 3}), Tensor());
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

struct ConvCase {
  Shape x, w;
  std::array<int64_t, 2> strides, dilations;
  Padding padding;
};

TEST(Conv2D, CpuMatchesTheReferenceForwardAndBackward) {
  const ConvCase cases[] = {
      {{2, 7, 9, 3}, {3, 3, 3, 5}, {1, 1}, {1, 1}, Padding::kValid},
      {{2, 7, 9, 3}, {3, 3, 3, 5}, {1, 1}, {1, 1}, Padding::kSame},
      {{2, 8, 8, 4}, {3, 3, 4, 6}, {2, 2}, {1, 1}, Padding::kSame},
      {{1, 9, 7, 2}, {3, 2, 2, 3}, {2, 1}, {1, 1}, Padding::kValid},
      {{2, 10, 11, 3}, {3, 3, 3, 4}, {1, 1}, {2, 2}, Padding::kSame},
      {{2, 10, 11, 3}, {3, 3, 3, 4}, {1, 1}, {2, 2}, Padding::kValid},
      {{3, 5, 5, 8}, {1, 1, 8, 16}, {1, 1}, {1, 1}, Padding::kValid},
      {{4, 28, 28, 1}, {3, 3, 1, 32}, {1, 1}, {1, 1}, Padding::kValid},
      {{4, 26, 26, 32}, {3, 3, 32, 64}, {1, 1}, {1, 1}, Padding::kValid},
      {{2, 6, 6, 5}, {5, 5, 5, 7}, {1, 1}, {1, 1}, Padding::kSame},
      {{2, 4, 4, 3}, {2, 2, 3, 2}, {2, 2}, {1, 1}, Padding::kSame},
  };
  for (const ConvCase& c : cases) {
    Conv2DParams p;
    p.strides = c.strides;
    p.dilations = c.dilations;
    p.padding = ComputePadding(c.padding, c.x[1], c.x[2], c.w[0], c.w[1], c.strides, c.dilations);
    SCOPED_TRACE("x " + ShapeString(c.x) + " w " + ShapeString(c.w) + " stride " +
                 std::to_string(c.strides[0]) + " dilation " + std::to_string(c.dilations[0]));
    Tensor x = Random(c.x, 11), w = Random(c.w, 12), b = Random({c.w[3]}, 13);
    Tensor y = Conv2DForward(x, w, b, p);
    Tensor dy = Random(y.shape(), 14);
    ExpectBackendsAgree(
        [&] {
          Conv2DWeightGrads g = Conv2DBackwardWeights(dy, x, c.w, p, true);
          Conv2DWeightGrads g2 = Conv2DBackwardWeights(dy, x, c.w, p, false);
          return std::vector<Tensor>{Conv2DForward(x, w, b, p),
                                     Conv2DForward(x, w, Tensor(), p),
                                     Conv2DBackwardData(dy, w, c.x, p),
                                     g.dw,
                                     g.dbias,
                                     g2.dw};
        },
        2e-4f, 2e-4f);
  }
}

TEST(Conv2D, ReferenceComputesAKnownConvolution) {
  ScopedBackend scope(ReferenceBackend());
  // 3x3 image of 1..9, 2x2 kernel of ones, valid: sums of 2x2 windows.
  Tensor x = Tensor::FromVector({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Tensor::Full({2, 2, 1, 1}, 1.f);
  Tensor y = Conv2DForward(x, w, Tensor::FromVector({1}, {0.5f}), Conv2DParams{});
  EXPECT_EQ(y.ToVector(), (std::vector<float>{12.5f, 16.5f, 24.5f, 28.5f}));
  // Same padding with an even kernel pads bottom/right only (TensorFlow).
  Conv2DParams same;
  same.padding = ComputePadding(Padding::kSame, 3, 3, 2, 2, {1, 1}, {1, 1});
  Tensor ys = Conv2DForward(x, w, Tensor(), same);
  EXPECT_EQ(ys.ToVector(), (std::vector<float>{12, 16, 9, 24, 28, 15, 15, 17, 9}));
}

TEST(Conv2D, EmptyBatchGivesEmptyOutputAndZeroWeightGradients) {
  Tensor x = Tensor::Zeros({0, 5, 5, 2});
  Tensor w = Random({3, 3, 2, 4}, 1);
  Tensor y = Conv2DForward(x, w, Tensor(), Conv2DParams{});
  EXPECT_EQ(y.shape(), (Shape{0, 3, 3, 4}));
  Conv2DWeightGrads g = Conv2DBackwardWeights(y, x, w.shape(), Conv2DParams{}, true);
  EXPECT_EQ(ReduceOp(Reduce::kSum, EltwiseForward(Eltwise::kAbs, g.dw), {}).item(), 0.f);
  EXPECT_EQ(g.dbias.ToVector(), (std::vector<float>{0, 0, 0, 0}));
}

TEST(Conv2D, DiesWhenTheInputIsTooSmall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(Conv2DForward(Tensor::Zeros({1, 2, 2, 1}), Tensor::Zeros({3, 3, 1, 1}), Tensor(),
                             Conv2DParams{}),
               "too small");
}

TEST(ConvOutputSize, FollowsTheFloorFormula) {
  EXPECT_EQ(ConvOutputSize(28, 3, 1, 1, 0, 0), 26);
  EXPECT_EQ(ConvOutputSize(7, 3, 2, 1, 1, 1), 4);
  EXPECT_EQ(ConvOutputSize(10, 3, 1, 2, 0, 0), 6);
  EXPECT_LE(ConvOutputSize(2, 3, 1, 1, 0, 0), 0);
}

}  // namespace
}  // namespace edl::tensor

namespace edl::tensor {
namespace {

TEST(Conv2D, RunsConcurrentlyFromSeveralThreads) {
  Tensor x = testing::Random({2, 9, 9, 4}, 81), w = testing::Random({3, 3, 4, 8}, 82);
  Tensor expected;
  {
    ScopedBackend scope(ReferenceBackend());
    expected = Conv2DForward(x, w, Tensor(), Conv2DParams{});
  }
  std::vector<Tensor> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) results[t] = Conv2DForward(x, w, Tensor(), Conv2DParams{});
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Tensor& r : results) EXPECT_TRUE(testing::Close(r, expected, 2e-4f, 2e-4f));
}

TEST(SetNumThreads, IsReportedBack) {
  int before = NumThreads();
  SetNumThreads(1);
  EXPECT_EQ(NumThreads(), 1);
  SetNumThreads(before);
}

}  // namespace
}  // namespace edl::tensor
