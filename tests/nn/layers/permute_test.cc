// Permute and the Transpose under it: each output element comes from the
// input position the permutation names, on the reference loops, oneDNN and
// the composition used where a backend has no Transpose (CUDA today);
// gradients; errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "nn/functional.h"
#include "tensor/backend.h"
#include "tensor/reference/loop_backend.h"
#include "tests/nn/gradient_check.h"
#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using layer_testing::BuiltLayer;
using layer_testing::LayerError;
using testing::RandomTensor;

class WithoutTranspose : public tensor::reference::LoopBackend {
 public:
  bool HasTranspose() const override { return false; }
};

// x [2, 3, 4, 5] permuted by (0, 3, 1, 2), by index arithmetic.
std::vector<float> Expected(const Tensor& x) {
  std::vector<float> y;
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 5; ++d)
      for (int h = 0; h < 3; ++h)
        for (int w = 0; w < 4; ++w) y.push_back(x.f32()[((n * 3 + h) * 4 + w) * 5 + d]);
  return y;
}

TEST(Permute, TakesEachOutputAxisFromTheInputAxisItNames) {
  std::mt19937_64 rng(1);
  const Tensor x = RandomTensor({2, 3, 4, 5}, rng);
  auto l = BuiltLayer("Permute", {{"dims", {3, 1, 2}}}, {{3, 4, 5}});
  WithoutTranspose composed;
  for (tensor::Backend* b : std::vector<tensor::Backend*>{&tensor::ReferenceBackend(),
                                                          &tensor::CpuBackend(), &composed}) {
    SCOPED_TRACE(b->name());
    tensor::ScopedBackend scoped(*b);
    const Var y = l->Call({Var(x)}, {})[0];
    EXPECT_EQ(y.shape(), (Shape{2, 5, 3, 4}));
    EXPECT_EQ(y.value().ToVector(), Expected(x));
  }
}

TEST(Permute, GradientsMatchFiniteDifferencesAlsoComposed) {
  std::mt19937_64 rng(2);
  auto l = BuiltLayer("Permute", {{"dims", {2, 3, 1}}}, {{2, 3, 2}});
  const Tensor x = RandomTensor({2, 2, 3, 2}, rng);
  auto f = [&](const std::vector<Var>& v) { return l->Call(v, {})[0]; };
  testing::ExpectGradientsMatch(f, {x});
  WithoutTranspose composed;
  tensor::ScopedBackend scoped(composed);
  testing::ExpectGradientsMatchOnCurrentBackend(f, {x}, {});
}

TEST(Permute, RefusesAnythingButAPermutationOfTheAxes) {
  EXPECT_EQ(LayerError("Permute", {{"dims", {1, 1}}}, {{2, 3}}),
            "dims must be a permutation of 1..2, got [1,1]");
  EXPECT_EQ(LayerError("Permute", {{"dims", {0, 1}}}, {{2, 3}}),
            "dims must be a permutation of 1..2, got [0,1]");
  EXPECT_EQ(LayerError("Permute", nlohmann::json::object(), {{2, 3}}), "dims is required");
  EXPECT_EQ(LayerError("Permute", {{"dims", {2, 1}}}, {{2, 3, 4}}),
            "layer \"l\" (Permute): dims has 2 axes, the input [2, 3, 4] has 3");
}

}  // namespace
}  // namespace edl::nn::layers
