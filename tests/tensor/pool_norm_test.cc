// Pooling, normalization and softmax: CPU backend vs reference, and the
// reference against known values.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/tensor/backend_compare.h"

namespace edl::tensor {
namespace {

using testing::ExpectBackendsAgree;
using testing::Random;

struct PoolCase {
  Shape x;
  std::array<int64_t, 2> kernel, strides;
  Padding padding;
};

TEST(Pool2D, CpuMatchesTheReferenceForwardAndBackward) {
  const PoolCase cases[] = {
      {{2, 8, 8, 3}, {2, 2}, {2, 2}, Padding::kValid},
      {{2, 7, 9, 5}, {2, 2}, {2, 2}, Padding::kValid},
      {{2, 7, 9, 5}, {2, 2}, {2, 2}, Padding::kSame},
      {{1, 7, 7, 4}, {3, 3}, {1, 1}, Padding::kSame},
      {{3, 9, 6, 2}, {3, 2}, {2, 1}, Padding::kSame},
      {{64, 24, 24, 64}, {2, 2}, {2, 2}, Padding::kValid},
  };
  for (const PoolCase& c : cases) {
    Pool2DParams p;
    p.kernel = c.kernel;
    p.strides = c.strides;
    p.padding =
        ComputePadding(c.padding, c.x[1], c.x[2], c.kernel[0], c.kernel[1], c.strides, {1, 1});
    for (PoolKind kind : {PoolKind::kMax, PoolKind::kAvg}) {
      SCOPED_TRACE(ShapeString(c.x) + (kind == PoolKind::kMax ? " max" : " avg"));
      Tensor x = Random(c.x, 21);
      Pool2DResult r = Pool2DForward(kind, x, p);
      Tensor dy = Random(r.y.shape(), 22);
      ExpectBackendsAgree([&] {
        Pool2DResult f = Pool2DForward(kind, x, p);
        return std::vector<Tensor>{f.y, Pool2DBackward(kind, dy, x, f, p)};
      });
    }
  }
}

TEST(Pool2D, CpuBackwardRecomputesAForeignWorkspace) {
  Pool2DParams p;
  Tensor x = Random({2, 6, 6, 3}, 23);
  Pool2DResult ref;
  {
    ScopedBackend scope(ReferenceBackend());
    ref = Pool2DForward(PoolKind::kMax, x, p);
  }
  Tensor dy = Random(ref.y.shape(), 24);
  Tensor dx_cpu = Pool2DBackward(PoolKind::kMax, dy, x, ref, p);
  ScopedBackend scope(ReferenceBackend());
  EXPECT_TRUE(testing::Close(dx_cpu, Pool2DBackward(PoolKind::kMax, dy, x, ref, p)));
}

TEST(Pool2D, AverageExcludesPadding) {
  Tensor x = Tensor::FromVector({1, 2, 2, 1}, {1, 2, 3, 4});
  Pool2DParams p;
  p.kernel = {2, 2};
  p.strides = {1, 1};
  p.padding = ComputePadding(Padding::kSame, 2, 2, 2, 2, {1, 1}, {1, 1});
  for (Backend* b : {&CpuBackend(), &ReferenceBackend()}) {
    ScopedBackend scope(*b);
    EXPECT_EQ(Pool2DForward(PoolKind::kAvg, x, p).y.ToVector(),
              (std::vector<float>{2.5f, 3, 3.5f, 4}))
        << b->name();
    EXPECT_EQ(Pool2DForward(PoolKind::kMax, x, p).y.ToVector(), (std::vector<float>{4, 4, 4, 4}))
        << b->name();
  }
}

TEST(BatchNorm, CpuMatchesTheReferenceInTrainingInferenceAndBackward) {
  for (Shape shape : {Shape{64, 10}, Shape{4, 6, 6, 64}, Shape{3, 5, 7}}) {
    SCOPED_TRACE(ShapeString(shape));
    const int64_t c = shape.back();
    Tensor x = Random(shape, 31, -2, 3), dy = Random(shape, 32);
    Tensor gamma = Random({c}, 33, 0.5f, 1.5f), beta = Random({c}, 34);
    Tensor mean = Random({c}, 35), var = Random({c}, 36, 0.5f, 2.f);
    ExpectBackendsAgree(
        [&] {
          BatchNormResult r = BatchNormTraining(x, gamma, beta, 1e-3f);
          NormGrads g = BatchNormBackward(dy, x, gamma, r.mean, r.variance, 1e-3f);
          return std::vector<Tensor>{
              r.y,  r.mean,   r.variance, BatchNormInference(x, gamma, beta, mean, var, 1e-3f),
              g.dx, g.dgamma, g.dbeta};
        },
        5e-4f, 5e-5f);
  }
}

TEST(BatchNorm, TrainingNormalizesEachChannel) {
  Tensor x = Tensor::FromVector({4, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  BatchNormResult r = BatchNormTraining(x, Tensor(), Tensor(), 0.f);
  EXPECT_EQ(r.mean.ToVector(), (std::vector<float>{2.5f, 25}));
  EXPECT_NEAR(r.variance.ToVector()[0], 1.25f, 1e-6);
  EXPECT_NEAR(r.y.ToVector()[0], -1.5f / std::sqrt(1.25f), 1e-5);
}

TEST(LayerNorm, CpuMatchesTheReferenceForwardAndBackward) {
  for (Shape shape : {Shape{8, 16}, Shape{2, 5, 33}, Shape{1, 7}}) {
    SCOPED_TRACE(ShapeString(shape));
    const int64_t c = shape.back();
    Tensor x = Random(shape, 41, -2, 3), dy = Random(shape, 42);
    Tensor gamma = Random({c}, 43, 0.5f, 1.5f), beta = Random({c}, 44);
    ExpectBackendsAgree(
        [&] {
          LayerNormResult r = LayerNormForward(x, gamma, beta, 1e-5f);
          NormGrads g = LayerNormBackward(dy, x, gamma, r.mean, r.variance, 1e-5f);
          return std::vector<Tensor>{r.y, r.mean, r.variance, g.dx, g.dgamma, g.dbeta};
        },
        5e-4f, 5e-5f);
  }
}

TEST(Softmax, CpuMatchesTheReferenceOnEveryAxis) {
  Tensor x = Random({3, 4, 5}, 51, -5, 5), dy = Random({3, 4, 5}, 52);
  for (int axis : {-1, 0, 1, 2}) {
    SCOPED_TRACE(axis);
    ExpectBackendsAgree([&] {
      Tensor y = Softmax(x, axis), ly = LogSoftmax(x, axis);
      return std::vector<Tensor>{y, ly, SoftmaxBackward(dy, y, axis),
                                 LogSoftmaxBackward(dy, ly, axis)};
    });
  }
}

TEST(Softmax, RowsSumToOneEvenForLargeInputs) {
  Tensor x = Tensor::FromVector({2, 3}, {1000, 1001, 1002, -5, 0, 5});
  Tensor s = ReduceOp(Reduce::kSum, Softmax(x), {1});
  EXPECT_NEAR(s.ToVector()[0], 1.f, 1e-6);
  EXPECT_NEAR(s.ToVector()[1], 1.f, 1e-6);
  EXPECT_NEAR(LogSoftmax(x).ToVector()[2], -std::log1p(std::exp(-1.f) + std::exp(-2.f)), 1e-5);
}

}  // namespace
}  // namespace edl::tensor
