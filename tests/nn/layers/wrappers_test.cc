// Bidirectional and TimeDistributed: what each output holds, gradients of
// inputs and weights, weight names, and errors. (Their predictions are held
// to the real TF.js by the round trip, tests/tfjs/build_models.js.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "nn/functional.h"
#include "nn/layers/layer_factory.h"
#include "tests/nn/gradient_check.h"
#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using layer_testing::BuiltLayer;
using layer_testing::LayerError;
using layer_testing::RandomizeWeights;
using nlohmann::json;
using testing::ExpectWeightGradientsMatch;
using testing::RandomTensor;

json Wrap(const std::string& cls, json config) {
  return {{"class_name", cls}, {"config", std::move(config)}};
}

TEST(Bidirectional, RunsAForwardAndABackwardCopyAndMergesThemInTimeOrder) {
  std::mt19937_64 rng(1);
  const Tensor x = RandomTensor({2, 4, 3}, rng);
  auto bi = BuiltLayer(
      "Bidirectional",
      {{"merge_mode", nullptr},
       {"layer", Wrap("GRU", {{"name", "g"}, {"units", 2}, {"return_sequences", true}})}},
      {{4, 3}});
  RandomizeWeights(*bi, 2);
  std::vector<std::string> names;
  for (Parameter* p : bi->weights()) names.push_back(p->name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"l/forward_g/kernel", "l/forward_g/recurrent_kernel",
                                      "l/forward_g/bias", "l/backward_g/kernel",
                                      "l/backward_g/recurrent_kernel", "l/backward_g/bias"}));
  std::vector<Var> out = bi->Call({Var(x)}, {});
  ASSERT_EQ(out.size(), 2u);
  // The backward output at step t is the backward GRU having read steps
  // T-1 .. t: the same GRU run forwards over the reversed input, reversed.
  auto plain = BuiltLayer("GRU", {{"units", 2}, {"return_sequences", true}}, {{4, 3}});
  std::vector<Parameter*> w = plain->weights();
  for (size_t i = 0; i < w.size(); ++i) w[i]->value.CopyFrom(bi->weights()[3 + i]->value);
  const Var reversed = fn::Reverse(plain->Call({fn::Reverse(Var(x), 1)}, {})[0], 1);
  const std::vector<float> want = reversed.value().ToVector(), got = out[1].value().ToVector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(Bidirectional, MergeModesAndReturnStateGiveKerasShapes) {
  auto shapes = [](const json& config) {
    auto l = CreateLayer("Bidirectional", "l", config);
    EDL_CHECK(l.ok()) << l.status().message();
    std::mt19937_64 rng(1);
    auto built = (*l)->Build({{6, 3}}, rng);
    EDL_CHECK(built.ok()) << built.status().message();
    std::string s;
    for (const Shape& shape : *built) s += tensor::ShapeString(shape);
    return s;
  };
  EXPECT_EQ(shapes({{"layer", Wrap("LSTM", {{"units", 4}})}}), "[8]");
  EXPECT_EQ(shapes({{"merge_mode", "ave"},
                    {"layer", Wrap("LSTM", {{"units", 4}, {"return_sequences", true}})}}),
            "[6, 4]");
  EXPECT_EQ(shapes({{"merge_mode", "concat"},
                    {"layer", Wrap("LSTM", {{"units", 4}, {"return_state", true}})}}),
            "[8][4][4][4][4]");
}

TEST(Bidirectional, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(3);
  for (const char* mode : {"concat", "sum", "mul", "ave"}) {
    SCOPED_TRACE(mode);
    auto l = BuiltLayer(
        "Bidirectional",
        {{"merge_mode", mode}, {"layer", Wrap("LSTM", {{"units", 2}, {"return_sequences", true}})}},
        {{3, 2}});
    RandomizeWeights(*l, 4);
    ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {}); },
                               {RandomTensor({2, 3, 2}, rng)}, l->weights());
  }
}

TEST(TimeDistributed, AppliesItsLayerToEveryStepWithOneSetOfWeights) {
  std::mt19937_64 rng(5);
  const Tensor x = RandomTensor({2, 3, 4}, rng);
  auto td = BuiltLayer("TimeDistributed", {{"layer", Wrap("Dense", {{"units", 2}})}}, {{3, 4}});
  RandomizeWeights(*td, 6);
  ASSERT_EQ(td->weights().size(), 2u);
  EXPECT_EQ(td->weights()[0]->name, "l/kernel");
  auto dense = BuiltLayer("Dense", {{"units", 2}}, {{4}});
  dense->weights()[0]->value.CopyFrom(td->weights()[0]->value);
  dense->weights()[1]->value.CopyFrom(td->weights()[1]->value);
  const std::vector<float> got = td->Call({Var(x)}, {})[0].value().ToVector();
  EXPECT_EQ(got, dense->Call({fn::Reshape(Var(x), {6, 4})}, {})[0].value().ToVector());
  ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return td->Call(v, {}); }, {x},
                             td->weights());
}

TEST(Wrappers, RefuseWhatTheyCannotHonourNamingTheField) {
  EXPECT_EQ(LayerError("Bidirectional", {{"layer", Wrap("Dense", {{"units", 2}})}}, {{3, 2}}),
            "layer must be SimpleRNN, LSTM or GRU, got Dense");
  EXPECT_EQ(LayerError("Bidirectional",
                       {{"merge_mode", "max"}, {"layer", Wrap("GRU", {{"units", 2}})}}, {{3, 2}}),
            "merge_mode must be concat, sum, mul, ave or null, got \"max\"");
  EXPECT_EQ(LayerError("Bidirectional",
                       {{"layer", Wrap("GRU", {{"units", 2}})},
                        {"backward_layer", Wrap("GRU", {{"units", 2}})}},
                       {{3, 2}})
                .substr(0, 14),
            "backward_layer");
  EXPECT_EQ(LayerError("Bidirectional",
                       {{"layer", Wrap("GRU", {{"units", 2}, {"stateful", true}})}}, {{3, 2}}),
            "layer: stateful true is not supported (state carried across batches); use false");
  EXPECT_EQ(LayerError("Bidirectional", json::object(), {{3, 2}}),
            "layer is required: {\"class_name\": ..., \"config\": {...}}");
  EXPECT_EQ(LayerError("TimeDistributed", {{"layer", Wrap("Dense", {{"units", 2}})}}, {{3}}),
            "layer \"l\" (TimeDistributed): expects input of rank >= 2 [steps, ...], got [3]");
  EXPECT_EQ(LayerError("Bidirectional", {{"layer", Wrap("LSTM", {{"units", 2}})}}, {{3}}),
            "layer \"l\" (Bidirectional): layer \"l/forward_LSTM\" (LSTM): expects rank-2 input "
            "[timesteps, features], got [3]");
}

}  // namespace
}  // namespace edl::nn::layers
