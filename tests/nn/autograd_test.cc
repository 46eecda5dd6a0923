#include "nn/autograd.h"

#include <gtest/gtest.h>

#include <random>

#include "nn/autograd_node.h"
#include "nn/functional.h"
#include "tests/nn/gradient_check.h"

namespace edl::nn {
namespace {

Parameter MakeParam(std::vector<float> values) {
  Parameter p;
  p.name = "p";
  p.value = Tensor::FromVector({static_cast<int64_t>(values.size())}, values);
  return p;
}

TEST(Autograd, AVarUsedTwiceAccumulatesBothGradients) {
  Parameter p = MakeParam({1.f, -2.f, 3.f});
  Var x = Use(p);
  Backward(fn::Sum(fn::Mul(x, x)));  // d/dx sum(x^2) = 2x
  EXPECT_EQ(p.grad.ToVector(), (std::vector<float>{2.f, -4.f, 6.f}));
}

TEST(Autograd, AParameterUsedThroughSeveralPathsAccumulates) {
  Parameter p = MakeParam({2.f});
  Var a = Use(p);
  Var b = fn::Mul(a, a);                        // a^2
  Var c = fn::Add(fn::Add(b, a), Use(p));       // a^2 + 2a
  Var d = fn::Mul(c, fn::Affine(b, 1.f, 1.f));  // (a^2 + 2a)(a^2 + 1)
  Backward(fn::Sum(d));
  // d' = (2a + 2)(a^2 + 1) + (a^2 + 2a)(2a) = 6*5 + 8*4 at a = 2.
  EXPECT_FLOAT_EQ(p.grad.item(), 62.f);
}

TEST(Autograd, GradientsAddUpAcrossBackwardCallsUntilZeroGrad) {
  Parameter p = MakeParam({1.f, 1.f});
  Backward(fn::Sum(fn::Affine(Use(p), 3.f)));
  Backward(fn::Sum(fn::Affine(Use(p), 2.f)));
  EXPECT_EQ(p.grad.ToVector(), (std::vector<float>{5.f, 5.f}));
  p.ZeroGrad();
  EXPECT_FALSE(p.grad.defined());
}

TEST(Autograd, TwoParametersNeverShareAGradientBuffer) {
  Parameter a = MakeParam({1.f, 2.f}), b = MakeParam({3.f, 4.f});
  Backward(fn::Sum(fn::Add(Use(a), Use(b))));
  ASSERT_TRUE(a.grad.defined() && b.grad.defined());
  EXPECT_FALSE(a.grad.SharesStorageWith(b.grad));
  a.grad.Fill(0.f);
  EXPECT_EQ(b.grad.ToVector(), (std::vector<float>{1.f, 1.f}));
}

TEST(Autograd, AnExplicitSeedScalesTheGradient) {
  Parameter p = MakeParam({1.f, 2.f});
  Tensor seed = Tensor::FromVector({2}, {3.f, -1.f});
  Backward(fn::Affine(Use(p), 2.f), seed);
  EXPECT_EQ(p.grad.ToVector(), (std::vector<float>{6.f, -2.f}));
  EXPECT_FALSE(p.grad.SharesStorageWith(seed));
}

TEST(Autograd, NoGradGuardRecordsNothingAndNests) {
  Parameter p = MakeParam({1.f});
  EXPECT_TRUE(GradEnabled());
  {
    NoGradGuard outer;
    EXPECT_FALSE(GradEnabled());
    {
      NoGradGuard inner;
      EXPECT_FALSE(Use(p).requires_grad());
    }
    EXPECT_FALSE(GradEnabled());
    Var y = fn::Affine(Use(p), 2.f);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_FLOAT_EQ(y.value().item(), 2.f);
  }
  EXPECT_TRUE(GradEnabled());
  EXPECT_TRUE(Use(p).requires_grad());
}

TEST(Autograd, UntrainableParametersAreConstants) {
  Parameter p = MakeParam({1.f});
  p.trainable = false;
  Var y = fn::Affine(Use(p), 2.f);
  EXPECT_FALSE(y.requires_grad());
  Backward(fn::Sum(y));  // nothing to do
  EXPECT_FALSE(p.grad.defined());
}

TEST(Autograd, BackwardReleasesTheGraph) {
  Parameter p = MakeParam({1.f});
  Var y = fn::Sum(fn::Affine(Use(p), 2.f));
  Backward(y);
  EXPECT_TRUE(y.node()->released);
  EXPECT_TRUE(y.node()->inputs.empty());
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(Backward(y), "already back-propagated");
}

TEST(Autograd, ALongChainIsDestroyedWithoutDeepRecursion) {
  Parameter p = MakeParam({1.f});
  Var x = Use(p);
  for (int i = 0; i < 200000; ++i) x = fn::Affine(x, 1.f, 0.f);
  EXPECT_TRUE(x.requires_grad());
  x = Var();  // must not overflow the stack
  SUCCEED();
}

TEST(Autograd, BackwardWalksALongChainIteratively) {
  Parameter p = MakeParam({1.f});
  Var x = Use(p);
  for (int i = 0; i < 100000; ++i) x = fn::Affine(x, 1.f, 1.f);
  Backward(x);
  EXPECT_FLOAT_EQ(p.grad.item(), 1.f);
}

TEST(Embedding, GradientIsSparseAndAppendsRows) {
  Parameter table;
  table.name = "emb";
  table.value = Tensor::FromVector({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
  Tensor ids = Tensor::FromInts({3}, {2, 0, 2});
  Var y = fn::Embedding(table, ids);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.value().ToVector(), (std::vector<float>{20, 21, 0, 1, 20, 21}));
  Backward(fn::Sum(y));
  EXPECT_FALSE(table.grad.defined());
  ASSERT_TRUE(table.sparse_grad.has_value());
  EXPECT_EQ(table.sparse_grad->ids.ToVector(), (std::vector<float>{2, 0, 2}));
  EXPECT_EQ(table.sparse_grad->num_rows, 4);

  Backward(fn::Sum(fn::Affine(fn::Embedding(table, Tensor::FromInts({1, 1}, {3})), 2.f)));
  EXPECT_EQ(table.sparse_grad->ids.ToVector(), (std::vector<float>{2, 0, 2, 3}));
  Tensor dense = tensor::Densify(*table.sparse_grad);
  EXPECT_EQ(dense.ToVector(), (std::vector<float>{1, 1, 0, 0, 2, 2, 2, 2}));
}

TEST(Embedding, SparseGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(3);
  Parameter table;
  table.value = testing::RandomTensor({5, 3}, rng);
  Tensor ids = Tensor::FromInts({2, 2}, {4, 1, 1, 0});
  Tensor seed = testing::RandomTensor({2, 2, 3}, rng);
  Backward(fn::Embedding(table, ids), seed);
  Tensor dense = tensor::Densify(*table.sparse_grad);
  NoGradGuard guard;
  for (int64_t k = 0; k < table.value.numel(); ++k) {
    float& v = table.value.f32()[k];
    const float saved = v;
    v = saved + 1e-2f;
    const double plus = testing::WeightedSum(fn::Embedding(table, ids).value(), seed);
    v = saved - 1e-2f;
    const double minus = testing::WeightedSum(fn::Embedding(table, ids).value(), seed);
    v = saved;
    EXPECT_NEAR(dense.f32()[k], (plus - minus) / 2e-2, 1e-3) << "element " << k;
  }
}

TEST(Embedding, RecordsNothingUnderNoGradGuard) {
  Parameter table;
  table.value = Tensor::Zeros({3, 2});
  NoGradGuard guard;
  EXPECT_FALSE(fn::Embedding(table, Tensor::FromInts({1}, {1})).requires_grad());
}

}  // namespace
}  // namespace edl::nn
