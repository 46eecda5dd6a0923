// RNN over cells: one cell computes what the matching recurrent layer does
// with the same weights, stacked cells what a chain of them does; states,
// weight names, gradients and errors. (Predictions are held to the real
// TF.js by the round trip, tests/tfjs/build_models.js.)
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

json Cell(const std::string& cls, json config) {
  return {{"class_name", cls}, {"config", std::move(config)}};
}

void ExpectSame(const Var& got, const Var& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<float> g = got.value().ToVector(), w = want.value().ToVector();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-6) << i;
}

// Copies `from`'s weights into `to`, in order.
void CopyWeights(Layer& from, Layer& to) {
  std::vector<Parameter*> a = from.weights(), b = to.weights();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) b[i]->value.CopyFrom(a[i]->value);
}

TEST(RnnOfCells, OneCellIsTheMatchingRecurrentLayer) {
  std::mt19937_64 rng(1);
  const Tensor x = RandomTensor({2, 5, 3}, rng);
  const json cell = {{"name", "c"}, {"units", 4}, {"recurrent_activation", "hard_sigmoid"}};
  auto rnn = BuiltLayer("RNN",
                        {{"cell", Cell("LSTMCell", cell)},
                         {"return_sequences", true},
                         {"return_state", true},
                         {"go_backwards", true}},
                        {{5, 3}});
  RandomizeWeights(*rnn, 2);
  std::vector<std::string> names;
  for (Parameter* p : rnn->weights()) names.push_back(p->name);
  EXPECT_EQ(names, (std::vector<std::string>{"l/kernel", "l/recurrent_kernel", "l/bias"}));
  json layer = cell;
  layer.update({{"return_sequences", true}, {"return_state", true}, {"go_backwards", true}});
  auto lstm = BuiltLayer("LSTM", layer, {{5, 3}});
  CopyWeights(*rnn, *lstm);
  std::vector<Var> got = rnn->Call({Var(x)}, {}), want = lstm->Call({Var(x)}, {});
  ASSERT_EQ(got.size(), 3u);  // sequence, h, c
  for (size_t i = 0; i < 3; ++i) ExpectSame(got[i], want[i]);
}

TEST(RnnOfCells, StackedCellsAreAChainWhoseFirstLinkRunsBackwards) {
  std::mt19937_64 rng(3);
  const Tensor x = RandomTensor({2, 4, 3}, rng);
  const json gru = {{"name", "g"}, {"units", 3}, {"reset_after", false}};
  const json simple = {{"name", "s"}, {"units", 2}, {"activation", "relu"}};
  auto rnn = BuiltLayer(
      "RNN",
      {{"cell", Cell("StackedRNNCells",
                     {{"cells", {Cell("GRUCell", gru), Cell("SimpleRNNCell", simple)}}})},
       {"go_backwards", true},
       {"return_state", true}},
      {{4, 3}});
  RandomizeWeights(*rnn, 4);
  std::vector<std::string> names;
  for (Parameter* p : rnn->weights()) names.push_back(p->name);
  EXPECT_EQ(names, (std::vector<std::string>{"l/RNNCell_0/kernel", "l/RNNCell_0/recurrent_kernel",
                                             "l/RNNCell_0/bias", "l/RNNCell_1/kernel",
                                             "l/RNNCell_1/recurrent_kernel", "l/RNNCell_1/bias"}));
  json first = gru, second = simple;
  first.update({{"return_sequences", true}, {"go_backwards", true}, {"return_state", true}});
  second.update({{"return_state", true}});
  auto a = BuiltLayer("GRU", first, {{4, 3}});
  auto b = BuiltLayer("SimpleRNN", second, {{4, 3}});
  std::vector<Parameter*> w = rnn->weights();
  for (size_t i = 0; i < 3; ++i) a->weights()[i]->value.CopyFrom(w[i]->value);
  for (size_t i = 0; i < 3; ++i) b->weights()[i]->value.CopyFrom(w[3 + i]->value);
  std::vector<Var> got = rnn->Call({Var(x)}, {});
  std::vector<Var> ya = a->Call({Var(x)}, {});
  std::vector<Var> yb = b->Call({ya[0]}, {});
  ASSERT_EQ(got.size(), 3u);  // the last output, then each cell's final state
  ExpectSame(got[0], yb[0]);
  ExpectSame(got[1], ya[1]);
  ExpectSame(got[2], yb[1]);
}

TEST(RnnOfCells, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(5);
  auto rnn = BuiltLayer(
      "RNN",
      {{"cell",
        Cell("StackedRNNCells",
             {{"cells", {Cell("LSTMCell", {{"units", 2}}), Cell("GRUCell", {{"units", 2}})}}})},
       {"return_sequences", true}},
      {{3, 2}});
  RandomizeWeights(*rnn, 6);
  ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return rnn->Call(v, {}); },
                             {RandomTensor({2, 3, 2}, rng)}, rnn->weights());
}

TEST(RnnOfCells, ConfigRoundTripsThroughKerasJson) {
  const json config = {
      {"cell", Cell("StackedRNNCells", {{"name", "stack"},
                                        {"cells",
                                         {Cell("GRUCell", {{"name", "g"}, {"units", 2}}),
                                          Cell("LSTMCell", {{"name", "m"}, {"units", 3}})}}})},
      {"return_sequences", true}};
  auto rnn = BuiltLayer("RNN", config, {{4, 2}});
  const json saved = rnn->Config();
  EXPECT_EQ(saved["cell"]["class_name"], "StackedRNNCells");
  EXPECT_EQ(saved["cell"]["config"]["cells"][1]["class_name"], "LSTMCell");
  EXPECT_EQ(saved["cell"]["config"]["cells"][1]["config"]["name"], "m");
  EXPECT_FALSE(saved["cell"]["config"]["cells"][0]["config"].contains("return_sequences"));
  auto again = BuiltLayer("RNN", saved, {{4, 2}});
  EXPECT_EQ(again->Config(), saved);
}

TEST(RnnOfCells, ACellNameThatIsNoStringFallsBackToTheCellClass) {
  auto rnn = BuiltLayer(
      "RNN",
      {{"cell", Cell("StackedRNNCells",
                     {{"name", 7}, {"cells", {Cell("GRUCell", {{"name", 3}, {"units", 2}})}}})}},
      {{4, 2}});
  const json saved = rnn->Config();
  EXPECT_EQ(saved["cell"]["config"]["name"], "stacked_rnn_cells");
  EXPECT_EQ(saved["cell"]["config"]["cells"][0]["config"]["name"], "GRUCell");
}

TEST(RnnOfCells, RefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(LayerError("RNN", json::object(), {{4, 2}}), "cell is required");
  EXPECT_EQ(LayerError("RNN", {{"cell", Cell("ConvLSTM2DCell", {{"units", 2}})}}, {{4, 2}}),
            "cell: ConvLSTM2DCell is not supported (SimpleRNNCell, GRUCell, LSTMCell or "
            "StackedRNNCells of them)");
  EXPECT_EQ(
      LayerError("RNN", {{"cell", Cell("LSTMCell", {{"units", 2}})}, {"stateful", true}}, {{4, 2}}),
      "stateful true is not supported (state kept across batches)");
  EXPECT_EQ(LayerError(
                "RNN",
                {{"cell", Cell("StackedRNNCells", {{"cells", {Cell("GRUCell", {{"units", 0}})}}})}},
                {{4, 2}}),
            "cell.config.cells[0]: units must be positive");
  EXPECT_EQ(LayerError("RNN", {{"cell", "LSTMCell"}}, {{4, 2}}),
            "cell must be {\"class_name\": ..., \"config\": {...}}, got \"LSTMCell\"");
}

}  // namespace
}  // namespace edl::nn::layers
