// SimpleRNN, LSTM and GRU: the oneDNN primitive (CPU backend) computes what
// the composed steps compute (reference backend), in values and in
// gradients; gradients match finite differences on both; masks keep the
// state at padded steps; dropout; the options that change the outputs'
// shapes; errors.
#include "nn/layers/recurrent.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "nn/functional.h"
#include "tensor/backend.h"
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

struct Case {
  const char* cls;
  json config;
};

std::vector<Case> Cases() {
  return {
      {"SimpleRNN", {{"units", 3}, {"return_sequences", true}}},
      {"LSTM", {{"units", 3}, {"return_sequences", true}, {"return_state", true}}},
      {"LSTM", {{"units", 2}, {"go_backwards", true}, {"unit_forget_bias", false}}},
      {"GRU", {{"units", 3}, {"return_sequences", true}, {"reset_after", false}}},
      {"GRU", {{"units", 3}, {"return_state", true}, {"reset_after", true}}},
      {"GRU",
       {{"units", 2}, {"go_backwards", true}, {"return_sequences", true}, {"use_bias", false}}},
  };
}

// Every output of the layer and every weight gradient of sum(seed * outputs).
std::vector<std::vector<float>> OutputsAndGradients(Layer& l, const Tensor& x) {
  for (Parameter* p : l.weights()) p->ZeroGrad();
  std::vector<Var> out = l.Call({Var(x)}, {});
  std::vector<std::vector<float>> r;
  std::mt19937_64 rng(5);
  Var total;
  for (const Var& o : out) {
    r.push_back(o.value().ToVector());
    Var term = fn::Sum(fn::Mul(o, Var(RandomTensor(o.shape(), rng))));
    total = total.defined() ? fn::Add(total, term) : term;
  }
  Backward(total);
  for (Parameter* p : l.weights()) r.push_back(p->grad.ToVector());
  return r;
}

void ExpectNear(const std::vector<std::vector<float>>& a,
                const std::vector<std::vector<float>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << "tensor " << i;
    for (size_t k = 0; k < a[i].size(); ++k) {
      EXPECT_NEAR(a[i][k], b[i][k], 1e-4) << "tensor " << i << " element " << k;
    }
  }
}

TEST(Recurrent, ThePrimitiveComputesWhatTheComposedStepsCompute) {
  ASSERT_TRUE(tensor::RnnAvailable(tensor::Device::kCPU, tensor::RnnCell::kLSTM));
  std::mt19937_64 rng(2);
  const Tensor x = RandomTensor({4, 5, 3}, rng);
  for (const Case& c : Cases()) {
    SCOPED_TRACE(std::string(c.cls) + " " + c.config.dump());
    auto l = BuiltLayer(c.cls, c.config, {{5, 3}});
    RandomizeWeights(*l, 9);
    std::vector<std::vector<float>> composed;
    {
      tensor::ScopedBackend reference(tensor::ReferenceBackend());
      ASSERT_FALSE(tensor::RnnAvailable(tensor::Device::kCPU, tensor::RnnCell::kLSTM));
      composed = OutputsAndGradients(*l, x);
    }
    ExpectNear(OutputsAndGradients(*l, x), composed);
  }
}

TEST(Recurrent, GradientsMatchFiniteDifferencesOnBothPaths) {
  std::mt19937_64 rng(3);
  for (const Case& c : Cases()) {
    SCOPED_TRACE(std::string(c.cls) + " " + c.config.dump());
    auto l = BuiltLayer(c.cls, c.config, {{4, 2}});
    RandomizeWeights(*l, 4);
    ExpectWeightGradientsMatch([&](const std::vector<Var>& v) { return l->Call(v, {}); },
                               {RandomTensor({2, 4, 2}, rng)}, l->weights());
  }
}

// GRU with reset_after=True (which TF.js cannot build) and LSTM against
// PyTorch's nn.GRU / nn.LSTM with the same weights (testdata/rnn_torch.json,
// written by rnn_torch.py), on the primitive and on the composed steps.
TEST(Recurrent, PredictsWhatPyTorchPredictsWithTheSameWeights) {
  const json golden = layer_testing::ReadTestData("rnn_torch.json");
  ASSERT_EQ(golden["cases"].size(), 2u);
  for (const json& c : golden["cases"]) {
    const std::string cls = c["class_name"];
    SCOPED_TRACE(cls);
    const Tensor x = layer_testing::TensorFromJson(c["x"]);
    auto l = BuiltLayer(cls, c["config"], {{x.dim(1), x.dim(2)}});
    std::vector<Parameter*> w = l->weights();
    ASSERT_EQ(w.size(), c["weights"].size());
    for (size_t i = 0; i < w.size(); ++i) {
      w[i]->value.CopyFrom(layer_testing::TensorFromJson(c["weights"][i]));
    }
    for (tensor::Backend* b : {&tensor::ReferenceBackend(), &tensor::CpuBackend()}) {
      SCOPED_TRACE(b->name());
      tensor::ScopedBackend scoped(*b);
      std::vector<Var> out = l->Call({Var(x)}, {});
      ASSERT_EQ(out.size(), c["outputs"].size());
      for (size_t k = 0; k < out.size(); ++k) {
        const std::vector<float> got = out[k].value().ToVector();
        const std::vector<float> want = c["outputs"][k]["data"].get<std::vector<float>>();
        ASSERT_EQ(got.size(), want.size()) << "output " << k;
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << k << ":" << i;
      }
    }
  }
}

TEST(Recurrent, AMaskKeepsTheStateAtPaddedStepsSoPaddingChangesNothing) {
  std::mt19937_64 rng(6);
  // Two sequences of 3 real steps: one padded after (post), one before (pre).
  const Tensor real = RandomTensor({1, 3, 2}, rng);
  Tensor padded = Tensor::Zeros({2, 5, 2}), mask = Tensor::Zeros({2, 5});
  for (int t = 0; t < 3; ++t) {
    for (int f = 0; f < 2; ++f) {
      padded.f32()[(0 * 5 + t) * 2 + f] = real.f32()[t * 2 + f];
      padded.f32()[(1 * 5 + t + 2) * 2 + f] = real.f32()[t * 2 + f];
    }
    mask.f32()[t] = 1.f;
    mask.f32()[5 + t + 2] = 1.f;
  }
  for (const char* cls : {"SimpleRNN", "LSTM", "GRU"}) {
    SCOPED_TRACE(cls);
    auto l = BuiltLayer(cls, {{"units", 3}, {"return_state", true}}, {{5, 2}});
    RandomizeWeights(*l, 2);
    auto* rnn = dynamic_cast<Recurrent*>(l.get());
    const std::vector<float> want = rnn->Call({Var(real)}, {})[0].value().ToVector();
    const std::vector<Var> got = rnn->CallMasked({Var(padded)}, mask, {});
    const std::vector<float> h = got[0].value().ToVector();
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(h[i], want[i], 1e-5) << "post-padded";
      EXPECT_NEAR(h[3 + i], want[i], 1e-5) << "pre-padded";
    }
    // Without the mask the padding does change the result.
    const std::vector<float> unmasked = rnn->Call({Var(padded)}, {})[0].value().ToVector();
    EXPECT_GT(std::abs(unmasked[0] - want[0]) + std::abs(unmasked[1] - want[1]), 1e-3);
  }
}

TEST(Recurrent, HardSigmoidGatesRunAsComposedStepsOnTheCpu) {
  std::mt19937_64 rng(8);
  const Tensor x = RandomTensor({2, 4, 3}, rng);
  auto l = BuiltLayer("LSTM", {{"units", 2}, {"recurrent_activation", "hard_sigmoid"}}, {{4, 3}});
  RandomizeWeights(*l, 3);
  std::vector<std::vector<float>> reference;
  {
    tensor::ScopedBackend scoped(tensor::ReferenceBackend());
    reference = OutputsAndGradients(*l, x);
  }
  ExpectNear(OutputsAndGradients(*l, x), reference);
  // hard_sigmoid is not sigmoid: the same weights with sigmoid differ.
  auto sigmoid = BuiltLayer("LSTM", {{"units", 2}}, {{4, 3}});
  RandomizeWeights(*sigmoid, 3);
  EXPECT_NE(sigmoid->Call({Var(x)}, {})[0].value().ToVector(), reference[0]);
}

TEST(Recurrent, DropoutIsDrawnOncePerSequenceInTrainingOnly) {
  std::mt19937_64 rng(4);
  const Tensor x = RandomTensor({3, 4, 2}, rng);
  auto l =
      BuiltLayer("GRU", {{"units", 3}, {"dropout", 0.5}, {"recurrent_dropout", 0.3}}, {{4, 2}});
  auto plain = BuiltLayer("GRU", {{"units", 3}}, {{4, 2}});
  RandomizeWeights(*l, 1);
  RandomizeWeights(*plain, 1);
  const std::vector<float> inference = l->Call({Var(x)}, {})[0].value().ToVector();
  EXPECT_EQ(inference, plain->Call({Var(x)}, {})[0].value().ToVector());
  auto train = [&](uint64_t seed) {
    std::mt19937_64 r(seed);
    CallContext ctx;
    ctx.training = true;
    ctx.rng = &r;
    return l->Call({Var(x)}, ctx)[0].value().ToVector();
  };
  EXPECT_EQ(train(1), train(1));
  EXPECT_NE(train(1), inference);
  EXPECT_NE(train(1), train(2));
}

TEST(Recurrent, OutputShapesFollowReturnSequencesAndReturnState) {
  auto shapes = [](const std::string& cls, const json& config) {
    auto l = CreateLayer(cls, "l", config);
    EDL_CHECK(l.ok());
    std::mt19937_64 rng(1);
    std::string s;
    auto built = (*l)->Build({{7, 5}}, rng);
    EDL_CHECK(built.ok());
    for (const Shape& shape : *built) s += tensor::ShapeString(shape);
    return s;
  };
  EXPECT_EQ(shapes("LSTM", {{"units", 4}}), "[4]");
  EXPECT_EQ(shapes("LSTM", {{"units", 4}, {"return_sequences", true}, {"return_state", true}}),
            "[7, 4][4][4]");
  EXPECT_EQ(shapes("GRU", {{"units", 4}, {"return_state", true}}), "[4][4]");
  auto gru = BuiltLayer("GRU", {{"units", 4}}, {{7, 5}});
  EXPECT_EQ(gru->weights()[2]->value.shape(), (Shape{2, 12}));  // reset_after by default
  auto lstm = BuiltLayer("LSTM", {{"units", 2}, {"bias_initializer", "zeros"}}, {{7, 5}});
  EXPECT_EQ(lstm->weights()[2]->value.ToVector(), (std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0}));
}

TEST(Recurrent, RefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(LayerError("LSTM", {{"units", 2}, {"stateful", true}}, {{3, 2}}),
            "stateful true is not supported (state carried across batches); use false");
  EXPECT_EQ(LayerError("GRU", {{"units", 2}, {"implementation", 1}, {"dropout", 0.1}}, {{3, 2}}),
            "implementation 1 with dropout (a mask per gate) is not supported; use 2");
  EXPECT_EQ(LayerError("GRU", {{"units", 2}, {"implementation", 1}}, {{3, 2}}), "OK");
  EXPECT_EQ(LayerError("SimpleRNN", {{"units", 2}, {"recurrent_dropout", 1.0}}, {{3, 2}}),
            "recurrent_dropout must be in [0, 1), got 1.000000");
  EXPECT_EQ(LayerError("LSTM", {{"units", 2}}, {{3}}),
            "layer \"l\" (LSTM): expects rank-2 input [timesteps, features], got [3]");
  EXPECT_EQ(LayerError("LSTM", {}, {{3, 2}}), "units is required");
  EXPECT_NE(LayerError("LSTM", {{"units", 2}, {"recurrent_activation", "hardish"}}, {{3, 2}})
                .find("unsupported activation \"hardish\""),
            std::string::npos);
  EXPECT_NE(
      LayerError("LSTM", {{"units", 2}, {"recurrent_constraint", {{"class_name", "MaxNorm"}}}},
                 {{3, 2}})
          .find("recurrent_constraint"),
      std::string::npos);
}

}  // namespace
}  // namespace edl::nn::layers
