// MultiHeadAttention: predicts what PyTorch's nn.MultiheadAttention predicts
// with the same weights (tests/nn/layers/testdata/mha_torch.json, written
// by mha_torch.py), with and without masks; gradients of inputs and weights;
// a mask keeps masked positions out; errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "nn/functional.h"
#include "tests/nn/gradient_check.h"
#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using layer_testing::BuiltLayer;
using layer_testing::LayerError;
using layer_testing::RandomizeWeights;
using nlohmann::json;
using testing::RandomTensor;

Shape WithoutBatch(const Shape& s) { return Shape(s.begin() + 1, s.end()); }

TEST(MultiHeadAttention, PredictsWhatPyTorchPredictsWithTheSameWeights) {
  const json golden = layer_testing::ReadTestData("mha_torch.json");
  ASSERT_EQ(golden["cases"].size(), 3u);
  for (const json& c : golden["cases"]) {
    SCOPED_TRACE(c["config"].dump());
    std::vector<Tensor> inputs;
    std::vector<Shape> shapes;
    for (const json& t : c["inputs"]) {
      inputs.push_back(layer_testing::TensorFromJson(t));
      shapes.push_back(WithoutBatch(inputs.back().shape()));
    }
    auto l = BuiltLayer("MultiHeadAttention", c["config"], shapes);
    size_t set = 0;
    for (Parameter* p : l->weights()) {
      const std::string name = p->name.substr(p->name.find('/') + 1);  // "query/kernel"
      ASSERT_TRUE(c["weights"].contains(name)) << name;
      p->value.CopyFrom(layer_testing::TensorFromJson(c["weights"][name]));
      ++set;
    }
    EXPECT_EQ(set, c["weights"].size());
    std::vector<Var> vars;
    for (const Tensor& t : inputs) vars.push_back(Var(t));
    const std::vector<float> got = l->Call(vars, {})[0].value().ToVector();
    const std::vector<float> want = c["output"]["data"].get<std::vector<float>>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

TEST(MultiHeadAttention, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(2);
  auto l = BuiltLayer("MultiHeadAttention",
                      {{"num_heads", 2}, {"key_dim", 2}, {"value_dim", 3}, {"output_shape", 3}},
                      {{3, 4}, {2, 5}});
  RandomizeWeights(*l, 3);
  testing::ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {}); },
                                      {RandomTensor({2, 3, 4}, rng), RandomTensor({2, 2, 5}, rng)},
                                      l->weights());
}

TEST(MultiHeadAttention, AMaskedPositionDoesNotChangeTheOutput) {
  std::mt19937_64 rng(4);
  auto l = BuiltLayer("MultiHeadAttention", {{"num_heads", 2}, {"key_dim", 3}},
                      {{2, 4}, {3, 4}, {3, 4}, {2, 3}});
  RandomizeWeights(*l, 5);
  const Tensor q = RandomTensor({1, 2, 4}, rng), v = RandomTensor({1, 3, 4}, rng);
  const Tensor mask = Tensor::FromVector({1, 2, 3}, {1, 1, 0, 1, 1, 0});  // value step 2 hidden
  Tensor changed = v.Clone();
  for (int f = 0; f < 4; ++f) changed.f32()[2 * 4 + f] += 3.f;
  auto run = [&](const Tensor& value) {
    return l->Call({Var(q), Var(value), Var(value), Var(mask)}, {})[0].value().ToVector();
  };
  const std::vector<float> a = run(v), b = run(changed);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << i;
  // Without the mask the change shows.
  auto unmasked = [&](const Tensor& value) {
    return l->Call({Var(q), Var(value), Var(value)}, {})[0].value().ToVector();
  };
  EXPECT_NE(unmasked(v), unmasked(changed));
}

TEST(MultiHeadAttention, RefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(LayerError("MultiHeadAttention", {{"key_dim", 2}}, {{2, 4}, {3, 4}}),
            "num_heads is required");
  EXPECT_EQ(
      LayerError("MultiHeadAttention", {{"num_heads", 2}, {"key_dim", 2}, {"attention_axes", {1}}},
                 {{2, 4}, {3, 4}}),
      "attention_axes is not supported, got [1]");
  EXPECT_EQ(LayerError("MultiHeadAttention", {{"num_heads", 2}, {"key_dim", 2}}, {{2, 4}}),
            "layer \"l\" (MultiHeadAttention): expects query, value and optionally key and "
            "attention_mask, got 1 inputs");
  EXPECT_EQ(LayerError("MultiHeadAttention", {{"num_heads", 2}, {"key_dim", 2}},
                       {{2, 4}, {3, 4}, {3, 4}, {3, 2}}),
            "layer \"l\" (MultiHeadAttention): attention_mask must be [query steps, value steps] "
            "= [2, 3], got [3, 2]");
}

}  // namespace
}  // namespace edl::nn::layers
