// Tensors passed by keyword in a saved model (MultiHeadAttention's value,
// key and attention_mask): Keras 2 keeps them in an inbound reference's
// fourth entry, Keras 3 under "kwargs"; both load, and keyword and
// positional calls compute the same.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "nn/keras/model.h"
#include "tests/nn/gradient_check.h"

namespace edl::nn::keras {
namespace {

std::string Functional(const std::string& attention_node, bool with_mask) {
  std::string inputs =
      R"({"name": "q", "class_name": "InputLayer", "config": {"name": "q", "batch_input_shape": [null, 2, 4]}, "inbound_nodes": []},
      {"name": "v", "class_name": "InputLayer", "config": {"name": "v", "batch_input_shape": [null, 3, 4]}, "inbound_nodes": []},)";
  if (with_mask) {
    inputs +=
        R"({"name": "m", "class_name": "InputLayer", "config": {"name": "m", "batch_input_shape": [null, 2, 3]}, "inbound_nodes": []},)";
  }
  return R"({"class_name": "Functional", "config": {"name": "f", "layers": [)" + inputs +
         R"({"name": "a", "class_name": "MultiHeadAttention", "config": {"name": "a", "num_heads": 2, "key_dim": 2}, "inbound_nodes": [)" +
         attention_node + R"(]}], "input_layers": [["q", 0, 0], ["v", 0, 0])" +
         (with_mask ? R"(, ["m", 0, 0])" : "") + R"(], "output_layers": [["a", 0, 0]]}})";
}

std::vector<float> Predict(const std::string& json, const std::vector<Tensor>& inputs) {
  auto m = Model::FromKerasJson(json, "m.json", "model", 1);
  EDL_CHECK(m.ok()) << m.status().message();
  NoGradGuard no_grad;
  return (*m)->Forward(inputs, false)[0].value().ToVector();
}

TEST(KeywordInputs, Keras2AndKeras3KeywordsMeanWhatPositionsMean) {
  std::mt19937_64 rng(1);
  const Tensor q = testing::RandomTensor({1, 2, 4}, rng), v = testing::RandomTensor({1, 3, 4}, rng);
  const Tensor mask = Tensor::FromVector({1, 2, 3}, {1, 0, 1, 1, 1, 0});
  const std::vector<float> positional = Predict(
      Functional(R"([["q", 0, 0, {}], ["v", 0, 0, {}], ["v", 0, 0, {}], ["m", 0, 0, {}]])", true),
      {q, v, mask});
  // Keras 2: value and attention_mask by keyword; key defaults to value.
  EXPECT_EQ(
      Predict(Functional(R"([["q", 0, 0, {"value": ["v", 0, 0], "attention_mask": ["m", 0, 0]}]])",
                         true),
              {q, v, mask}),
      positional);
  // Keras 3.
  const std::string tensor =
      R"({"class_name": "__keras_tensor__", "config": {"shape": [null, 3, 4], "dtype": "float32", "keras_history": ["NAME", 0, 0]}})";
  auto ref = [&](const std::string& name) {
    std::string t = tensor;
    return t.replace(t.find("NAME"), 4, name);
  };
  EXPECT_EQ(Predict(Functional(R"({"args": [)" + ref("q") + R"(], "kwargs": {"value": )" +
                                   ref("v") + R"(, "attention_mask": )" + ref("m") + "}}",
                               true),
                    {q, v, mask}),
            positional);
  // The mask matters.
  EXPECT_NE(Predict(Functional(R"([["q", 0, 0, {"value": ["v", 0, 0]}]])", false), {q, v}),
            positional);
}

TEST(KeywordInputs, CallOptionsEdlCannotHonourAreRefusedByName) {
  auto m = Model::FromKerasJson(
      Functional(R"([["q", 0, 0, {"value": ["v", 0, 0], "use_causal_mask": true}]])", false),
      "m.json", "model", 1);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "m.json: model.config.layers[2].inbound_nodes[0] (MultiHeadAttention \"a\")[0][3]."
            "use_causal_mask: is not supported; pass an explicit attention_mask instead");
}

}  // namespace
}  // namespace edl::nn::keras
