// Gradient clipping: the host loops (CPU tensors) and the tensor-op
// composition used on other devices give the same clipped gradients.
#include "nn/optim/gradient_clip.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tensor/tensor.h"

namespace edl::nn::optim {
namespace {

using tensor::Tensor;

void ExpectNear(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<float> va = a.ToVector(), vb = b.ToVector();
  for (size_t i = 0; i < va.size(); ++i) {
    EXPECT_NEAR(va[i], vb[i], 1e-6f * std::max(1.f, std::fabs(vb[i]))) << "element " << i;
  }
}

const Tensor& Gradient() {
  static const Tensor g = Tensor::FromVector({2, 3}, {0.5f, -3.f, 2.f, 0.1f, -0.2f, 4.f});
  return g;
}

TEST(GradientClip, ClipsEachElementToTheClipValue) {
  const Tensor clipped = ClipGradient(Gradient(), 1.0, 0);
  EXPECT_EQ(clipped.ToVector(), (std::vector<float>{0.5f, -1.f, 1.f, 0.1f, -0.2f, 1.f}));
  ExpectNear(ClipGradientWithOps(Gradient(), 1.0, 0), clipped);
}

TEST(GradientClip, ScalesTheGradientDownToTheClipNorm) {
  const Tensor clipped = ClipGradient(Gradient(), 0, 2.0);
  double sum = 0;
  for (float v : clipped.ToVector()) sum += double{v} * v;
  EXPECT_NEAR(std::sqrt(sum), 2.0, 1e-6);
  ExpectNear(ClipGradientWithOps(Gradient(), 0, 2.0), clipped);
}

TEST(GradientClip, LeavesAGradientWithinTheNormAsItIs) {
  EXPECT_EQ(ClipGradient(Gradient(), 0, 100.0).ToVector(), Gradient().ToVector());
  EXPECT_EQ(ClipGradientWithOps(Gradient(), 0, 100.0).ToVector(), Gradient().ToVector());
}

TEST(GradientClip, AppliesTheValueBeforeTheNorm) {
  ExpectNear(ClipGradientWithOps(Gradient(), 1.0, 1.5), ClipGradient(Gradient(), 1.0, 1.5));
}

TEST(GradientClip, KeepsAZeroGradientZero) {
  const Tensor zeros = Tensor::Zeros({4});
  EXPECT_EQ(ClipGradient(zeros, 0, 1.0).ToVector(), zeros.ToVector());
  EXPECT_EQ(ClipGradientWithOps(zeros, 0, 1.0).ToVector(), zeros.ToVector());
}

TEST(GradientClip, ReturnsACopyAndLeavesTheInputUnchanged) {
  Tensor g = Gradient().Clone();
  Tensor a = ClipGradient(g, 1.0, 0);
  Tensor b = ClipGradientWithOps(g, 0, 0);
  EXPECT_EQ(g.ToVector(), Gradient().ToVector());
  b.f32()[0] = 42.f;
  EXPECT_EQ(g.ToVector(), Gradient().ToVector());
}

}  // namespace
}  // namespace edl::nn::optim
