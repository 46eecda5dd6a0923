#include <gtest/gtest.h>

#include <random>

#include "nn/functional.h"
#include "tests/nn/gradient_check.h"

namespace edl::nn {
namespace {

using testing::ExpectGradientsMatch;
using testing::RandomTensor;

class Arithmetic : public ::testing::Test {
 protected:
  std::mt19937_64 rng_{42};
};

TEST_F(Arithmetic, AddGradientsSumOverBroadcastDimensions) {
  ExpectGradientsMatch([](auto& v) { return fn::Add(v[0], v[1]); },
                       {RandomTensor({2, 3}, rng_), RandomTensor({3}, rng_)});
  ExpectGradientsMatch([](auto& v) { return fn::Add(v[0], v[1]); },
                       {RandomTensor({2, 1}, rng_), RandomTensor({1, 3}, rng_)});
}

TEST_F(Arithmetic, SubGradientsMatchFiniteDifferences) {
  ExpectGradientsMatch([](auto& v) { return fn::Sub(v[0], v[1]); },
                       {RandomTensor({3}, rng_), RandomTensor({2, 3}, rng_)});
}

TEST_F(Arithmetic, MulGradientsMatchFiniteDifferences) {
  ExpectGradientsMatch([](auto& v) { return fn::Mul(v[0], v[1]); },
                       {RandomTensor({2, 3}, rng_), RandomTensor({2, 1}, rng_)});
}

TEST_F(Arithmetic, DivGradientsMatchFiniteDifferences) {
  ExpectGradientsMatch([](auto& v) { return fn::Div(v[0], v[1]); },
                       {RandomTensor({2, 3}, rng_), RandomTensor({3}, rng_, 0.5f, 2.f)});
}

TEST_F(Arithmetic, MaximumAndMinimumRouteGradientsToTheWinner) {
  Tensor a = RandomTensor({2, 3}, rng_);
  Tensor b = RandomTensor({3}, rng_);
  // Keep every pair at least 0.1 apart so finite differences see no kink.
  for (int64_t i = 0; i < 6; ++i) {
    float& x = a.f32()[i];
    const float y = b.f32()[i % 3];
    if (std::abs(x - y) < 0.1f) x = y + 0.2f;
  }
  ExpectGradientsMatch([](auto& v) { return fn::Maximum(v[0], v[1]); }, {a, b});
  ExpectGradientsMatch([](auto& v) { return fn::Minimum(v[0], v[1]); }, {a, b});
}

TEST_F(Arithmetic, AffineGradientIsAlpha) {
  ExpectGradientsMatch([](auto& v) { return fn::Affine(v[0], -2.5f, 1.f); },
                       {RandomTensor({4}, rng_)});
}

TEST_F(Arithmetic, MatMulGradientsMatchForEveryTransposition) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "ta=" << ta << " tb=" << tb);
      Tensor a = RandomTensor(ta ? Shape{4, 2} : Shape{2, 4}, rng_);
      Tensor b = RandomTensor(tb ? Shape{3, 4} : Shape{4, 3}, rng_);
      ExpectGradientsMatch([ta, tb](auto& v) { return fn::MatMul(v[0], v[1], ta, tb); }, {a, b});
    }
  }
}

TEST_F(Arithmetic, BatchedMatMulGradientsMatchFiniteDifferences) {
  ExpectGradientsMatch([](auto& v) { return fn::MatMul(v[0], v[1]); },
                       {RandomTensor({2, 2, 3}, rng_), RandomTensor({2, 3, 2}, rng_)});
  ExpectGradientsMatch([](auto& v) { return fn::MatMul(v[0], v[1], false, true); },
                       {RandomTensor({2, 2, 3}, rng_), RandomTensor({2, 4, 3}, rng_)});
}

TEST_F(Arithmetic, DenseGradientsMatchWithAndWithoutBias) {
  ExpectGradientsMatch(
      [](auto& v) { return fn::Dense(v[0], v[1], v[2]); },
      {RandomTensor({3, 4}, rng_), RandomTensor({4, 2}, rng_), RandomTensor({2}, rng_)});
  ExpectGradientsMatch([](auto& v) { return fn::Dense(v[0], v[1], Var()); },
                       {RandomTensor({3, 4}, rng_), RandomTensor({4, 2}, rng_)});
}

TEST_F(Arithmetic, DenseAppliesToTheLastAxisOfHigherRankInputs) {
  Var y = fn::Dense(Var(RandomTensor({2, 3, 4}, rng_)), Var(RandomTensor({4, 5}, rng_)), Var());
  EXPECT_EQ(y.shape(), (Shape{2, 3, 5}));
  ExpectGradientsMatch(
      [](auto& v) { return fn::Dense(v[0], v[1], v[2]); },
      {RandomTensor({2, 3, 4}, rng_), RandomTensor({4, 2}, rng_), RandomTensor({2}, rng_)});
}

TEST_F(Arithmetic, ConstantInputsGetNoGraphNode) {
  Var y = fn::Add(Var(Tensor::Full({2}, 1.f)), Var(Tensor::Full({2}, 2.f)));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.value().ToVector(), (std::vector<float>{3.f, 3.f}));
}

}  // namespace
}  // namespace edl::nn
