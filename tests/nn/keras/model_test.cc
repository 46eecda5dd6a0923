// Building models from Keras JSON: Sequential (with and without InputLayer),
// Functional (multi-input, multi-output, shared layers, Keras 3 nodes), and
// the errors malformed JSON gets.
#include "nn/keras/model.h"

#include <gtest/gtest.h>

#include "tests/nn/keras/model_test_util.h"

namespace edl::nn::keras {
namespace {

using testing::Build;
using testing::Error;
using testing::Names;

const char kSequentialTfjs[] = R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
  {"class_name": "Dense", "config": {"name": "d1", "units": 4, "activation": "relu",
                                     "batch_input_shape": [null, 3], "dtype": "float32"}},
  {"class_name": "Dense", "config": {"name": "d2", "units": 2}}]}})";

TEST(Model, BuildsASequentialModelFromItsFirstLayersInputShape) {
  auto m = Build(kSequentialTfjs);
  ASSERT_EQ(m->inputs().size(), 1u);
  EXPECT_EQ(m->inputs()[0].name, "d1_input");
  EXPECT_EQ(m->inputs()[0].shape, (Shape{3}));
  EXPECT_EQ(m->output_names(), std::vector<std::string>{"d2"});
  EXPECT_EQ(Names(*m), (std::vector<std::string>{"d1/kernel", "d1/bias", "d2/kernel", "d2/bias"}));
  auto y = m->Forward({Tensor::Zeros({5, 3})}, false);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (Shape{5, 2}));
}

TEST(Model, BuildsASequentialModelWithAnInputLayer) {
  auto m = Build(R"({"class_name": "Sequential", "config": {"layers": [
    {"class_name": "InputLayer", "config": {"name": "img", "batch_shape": [null, 4, 4]}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 2}}]}})");
  EXPECT_EQ(m->inputs()[0].name, "img");
  EXPECT_EQ(Names(*m), (std::vector<std::string>{"dense/kernel", "dense/bias"}));
  EXPECT_NE(m->Summary().find("flatten (Flatten)"), std::string::npos);
  EXPECT_NE(m->Summary().find("Total params: 34"), std::string::npos);
}

TEST(Model, SameSeedGivesSameWeightsAndOtherSeedsDiffer) {
  auto a = Build(kSequentialTfjs, 7), b = Build(kSequentialTfjs, 7), c = Build(kSequentialTfjs, 8);
  EXPECT_EQ(a->parameters()[0]->value.ToVector(), b->parameters()[0]->value.ToVector());
  EXPECT_NE(a->parameters()[0]->value.ToVector(), c->parameters()[0]->value.ToVector());
}

const char kFunctional[] = R"({"class_name": "Functional", "config": {"name": "f",
  "layers": [
    {"name": "out_b", "class_name": "Dense", "config": {"name": "out_b", "units": 1},
     "inbound_nodes": [[["shared", 1, 0, {}]]]},
    {"name": "a", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 3]}, "inbound_nodes": []},
    {"name": "b", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 3]}, "inbound_nodes": []},
    {"name": "shared", "class_name": "Dense", "config": {"name": "shared", "units": 2},
     "inbound_nodes": [[["a", 0, 0, {}]], [["b", 0, 0, {}]]]},
    {"name": "cat", "class_name": "Concatenate", "config": {"name": "cat"},
     "inbound_nodes": [[["shared", 0, 0, {}], ["shared", 1, 0, {}]]]}],
  "input_layers": [["a", 0, 0], ["b", 0, 0]],
  "output_layers": [["cat", 0, 0], ["out_b", 0, 0]]}})";

TEST(Model, BuildsAFunctionalModelWithASharedLayerAndTwoOutputs) {
  auto m = Build(kFunctional);
  ASSERT_EQ(m->inputs().size(), 2u);
  EXPECT_EQ(m->output_names(), (std::vector<std::string>{"cat", "out_b"}));
  EXPECT_EQ(m->output_shapes(), (std::vector<Shape>{{4}, {1}}));
  EXPECT_EQ(Names(*m), (std::vector<std::string>{"out_b/kernel", "out_b/bias", "shared/kernel",
                                                 "shared/bias"}));
  Tensor a = Tensor::FromVector({1, 3}, {1, 2, 3});
  auto y = m->Forward({a, a}, false);
  std::vector<float> cat = y[0].value().ToVector();
  // The shared layer gives the same result for the same input.
  EXPECT_EQ(cat[0], cat[2]);
  EXPECT_EQ(cat[1], cat[3]);
  EXPECT_NE(m->Summary().find("shared[1][0]"), std::string::npos);
}

TEST(Model, ReadsKeras3InboundNodes) {
  auto m = Build(R"({"class_name": "Functional", "config": {"name": "k3",
    "layers": [
      {"module": "keras.layers", "class_name": "InputLayer", "name": "x",
       "config": {"batch_shape": [null, 2], "dtype": "float32", "name": "x"}, "inbound_nodes": []},
      {"module": "keras.layers", "class_name": "Dense", "name": "d",
       "config": {"name": "d", "units": 3, "kernel_initializer": {"module": "keras.initializers",
         "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}},
       "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__",
         "config": {"shape": [null, 2], "dtype": "float32", "keras_history": ["x", 0, 0]}}], "kwargs": {}}]},
      {"module": "keras.layers", "class_name": "Add", "name": "sum",
       "config": {"name": "sum"},
       "inbound_nodes": [{"args": [[
         {"class_name": "__keras_tensor__", "config": {"keras_history": ["d", 0, 0]}},
         {"class_name": "__keras_tensor__", "config": {"keras_history": ["d", 0, 0]}}]], "kwargs": {}}]}],
    "input_layers": ["x", 0, 0], "output_layers": ["sum", 0, 0]}})");
  EXPECT_EQ(m->output_shapes(), (std::vector<Shape>{{3}}));
}

// Subtract has no TF.js counterpart: Keras JSON is its only way in.
TEST(Model, ReadsKeras3SubtractLeakyReLUAndPReLUAndRoundTripsThem) {
  const std::string tensor = R"({"class_name": "__keras_tensor__", "config": {"keras_history": [)";
  auto m = Build(R"({"class_name": "Functional", "config": {"name": "k3",
    "layers": [
      {"module": "keras.layers", "class_name": "InputLayer", "name": "a",
       "config": {"batch_shape": [null, 2], "dtype": "float32", "name": "a"}, "inbound_nodes": []},
      {"module": "keras.layers", "class_name": "InputLayer", "name": "b",
       "config": {"batch_shape": [null, 2], "dtype": "float32", "name": "b"}, "inbound_nodes": []},
      {"module": "keras.layers", "class_name": "Subtract", "name": "diff", "config": {"name": "diff"},
       "inbound_nodes": [{"args": [[)" +
                 tensor + R"("a", 0, 0]}}, )" + tensor + R"("b", 0, 0]}}]],
                          "kwargs": {}}]},
      {"module": "keras.layers", "class_name": "LeakyReLU", "name": "leaky",
       "config": {"name": "leaky", "negative_slope": 0.5},
       "inbound_nodes": [{"args": [)" +
                 tensor + R"("diff", 0, 0]}}], "kwargs": {}}]},
      {"module": "keras.layers", "class_name": "PReLU", "name": "p",
       "config": {"name": "p", "alpha_initializer": {"module": "keras.initializers",
         "class_name": "Constant", "config": {"value": 2.0}, "registered_name": null},
         "alpha_regularizer": null, "alpha_constraint": null, "shared_axes": [1]},
       "inbound_nodes": [{"args": [)" +
                 tensor + R"("leaky", 0, 0]}}], "kwargs": {}}]}],
    "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": ["p", 0, 0]}})");
  EXPECT_EQ(Names(*m), (std::vector<std::string>{"p/alpha"}));
  const std::vector<Tensor> in = {Tensor::FromVector({1, 2}, {1, 5}),
                                  Tensor::FromVector({1, 2}, {3, 2})};
  // a - b = [-2, 3]; leaky: [-1, 3]; PReLU with slope 2: [-2, 3].
  EXPECT_EQ(m->Forward(in, false)[0].value().ToVector(), (std::vector<float>{-2, 3}));
  auto again = Build(m->ToKerasJson());
  EXPECT_EQ(again->Forward(in, false)[0].value().ToVector(), (std::vector<float>{-2, 3}));
}

TEST(Model, RoundTripsThroughItsOwnKerasJson) {
  auto m = Build(kFunctional, 3);
  auto again = Build(m->ToKerasJson(), 3);
  EXPECT_EQ(Names(*again), Names(*m));
  auto seq = Build(kSequentialTfjs);
  auto seq_again = Build(seq->ToKerasJson());
  EXPECT_TRUE(seq_again->sequential());
  EXPECT_EQ(seq_again->inputs()[0].shape, (Shape{3}));
}

TEST(Model, SetWeightsMatchesByNameAndChecksShapes) {
  auto m = Build(kSequentialTfjs);
  std::vector<NamedTensor> w = {{"sequential/d1/kernel:0", Tensor::Zeros({3, 4})},
                                {"d1/bias", Tensor::Zeros({4})},
                                {"d2/kernel", Tensor::Zeros({4, 2})},
                                {"d2/bias", Tensor::Full({2}, 1.f)}};
  ASSERT_TRUE(m->SetWeights(w).ok());
  EXPECT_EQ(m->Forward({Tensor::Zeros({1, 3})}, false)[0].value().ToVector(),
            (std::vector<float>{1, 1}));
  w[2].value = Tensor::Zeros({4, 3});
  EXPECT_EQ(m->SetWeights(w).message(),
            "weight \"d2/kernel\" has shape [4, 3], but \"d2/kernel\" needs float32 [4, 2]");
  w.pop_back();
  w[2].value = Tensor::Zeros({4, 2});
  EXPECT_EQ(m->SetWeights(w).message(), "no value given for weight \"d2/bias\" [2]");
  w.push_back({"d3/kernel", Tensor::Zeros({1})});
  EXPECT_NE(m->SetWeights(w).message().find("weight \"d3/kernel\" matches no weight"),
            std::string::npos);
}

TEST(Model, RegularizationLossSumsTheLayersPenalties) {
  auto m = Build(R"({"class_name": "Sequential", "config": {"layers": [
    {"class_name": "Dense", "config": {"name": "d", "units": 1, "use_bias": false,
      "batch_input_shape": [null, 1], "kernel_initializer": "ones",
      "kernel_regularizer": {"class_name": "L1L2", "config": {"l1": 0.5, "l2": 0.25}}}}]}})");
  EXPECT_FLOAT_EQ(m->RegularizationLoss().value().item(), 0.75f);
}

struct BadCase {
  const char* json;
  const char* error;
};

TEST(Model, MalformedJsonGetsErrorsNamingPathAndLayer) {
  const BadCase cases[] = {
      {R"({"class_name": "Sequential", "config": {"layers": [
          {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28]}},
          {"class_name": "Reshape", "config": {"target_shape": [28, 28, 1]}},
          {"class_name": "Conv2D", "config": {"name": "conv1", "filters": 2, "kernel_size": 3}},
          {"class_name": "Conv2D", "config": {"name": "conv2", "filters": 2, "kernel_size": "3x3"}}]}})",
       "m.json: model.config.layers[3] (Conv2D \"conv2\"): kernel_size must be 1 or 2 "
       "integers, got \"3x3\""},
      {R"({"class_name": "Sequential", "config": {"layers": [
          {"class_name": "Dense", "config": {"units": 2, "batch_input_shape": [null, 3]}},
          {"class_name": "Dense", "config": {"units": 2}},
          {"class_name": "ConvLSTM2D", "config": {"units": 2}}]}})",
       "m.json: model.config.layers[2]: unsupported layer class \"ConvLSTM2D\""},
      {R"({"class_name": "Sequential", "config": {"layers": [
          {"class_name": "Dense", "config": {"name": "d", "units": 2}}]}})",
       "m.json: model.config.layers[0] (Dense \"d\"): the first layer of a Sequential model "
       "needs batch_input_shape (or the model must start with an InputLayer)"},
      {R"({"class_name": "Sequential", "config": {"layers": [
          {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784]}},
          {"class_name": "Conv2D", "config": {"name": "conv2", "filters": 2, "kernel_size": 3}}]}})",
       "m.json: model.config.layers[1] (Conv2D \"conv2\"): layer \"conv2\" (Conv2D): expects "
       "rank-3 input [H, W, C], got [784]"},
      {R"({"class_name": "Graph", "config": {}})",
       "m.json: model.class_name: unsupported model class \"Graph\"; supported: Sequential, "
       "Functional, Model"},
      {R"({"config": {}})",
       "m.json: model.class_name: is required (\"Sequential\", "
       "\"Functional\" or \"Model\")"},
      {R"({"class_name": "Sequential", "config": {"layers": 3}})",
       "m.json: model.config.layers: is required and must be a list of layers"},
      {R"({"class_name": "Sequential", "config": {"layers": [
          {"class_name": "Dense", "config": {"name": "d", "units": 2, "batch_input_shape": [null, 3]}},
          {"class_name": "Dense", "config": {"name": "d", "units": 2}}]}})",
       "m.json: model.config.layers[1] (Dense \"d\"): duplicate layer name \"d\" (also "
       "model.config.layers[0])"},
      {R"({"class_name": "Functional", "config": {"layers": [
          {"name": "x", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 2]}},
          {"name": "d", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": [[["y", 0, 0, {}]]]}],
          "input_layers": [["x", 0, 0]], "output_layers": [["d", 0, 0]]}})",
       "m.json: model.config.layers[1].inbound_nodes[0] (Dense \"d\")[0]: refers to unknown "
       "layer \"y\""},
      {R"({"class_name": "Functional", "config": {"layers": [
          {"name": "x", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 2]}},
          {"name": "d", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": [[["e", 0, 0, {}]]]},
          {"name": "e", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": [[["d", 0, 0, {}]]]}],
          "input_layers": [["x", 0, 0]], "output_layers": [["e", 0, 0]]}})",
       "m.json: model.config.layers[1].inbound_nodes[0] (Dense \"d\"): node 0 of layer \"e\" is "
       "part of a cycle"},
      {R"({"class_name": "Functional", "config": {"layers": [
          {"name": "x", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 2]}},
          {"name": "d", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": [[["x", 0, 0, {}]]]}],
          "input_layers": [["x", 0, 0]], "output_layers": [["d", 2, 0]]}})",
       "m.json: model.config.output_layers[0]: node 2 of layer \"d\" does not exist"},
      {R"({"class_name": "Functional", "config": {"layers": [
          {"name": "x", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 2]}},
          {"name": "d", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": [[["x", 0, 0, {}]]]}],
          "output_layers": [["d", 0, 0]]}})",
       "m.json: model.config.input_layers: is required: a list of [layer_name, node_index, "
       "tensor_index]"},
      {R"({"class_name": "Functional", "config": {"layers": [
          {"name": "x", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 2]}},
          {"name": "d", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": []}],
          "input_layers": [["x", 0, 0]], "output_layers": [["x", 0, 0]]}})",
       "m.json: model.config.layers[1] (Dense \"d\"): inbound_nodes is empty: the layer is "
       "never called"},
      {R"({"class_name": "Functional", "config": {"layers": [
          {"name": "x", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 2]}},
          {"name": "d", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": [[["x", 0, 1, {}]]]}],
          "input_layers": [["x", 0, 0]], "output_layers": [["d", 0, 0]]}})",
       "m.json: model.config.layers[1].inbound_nodes[0] (Dense \"d\")[0]: layer \"x\" has 1 "
       "output, so tensor_index must be < 1, got 1"},
      {R"({"class_name": "Functional", "config": {"layers": [
          {"name": "x", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 2]}},
          {"name": "d", "class_name": "Dense", "config": {"units": 2}, "inbound_nodes": [[["x", 0, 0, {}]]]}],
          "input_layers": [["d", 0, 0]], "output_layers": [["d", 0, 0]]}})",
       "m.json: model.config.input_layers[0]: \"d\" is not an InputLayer"},
      {R"([1, 2])", "m.json: model: a Keras model must be a JSON object, got [1,2]"},
  };
  for (const BadCase& c : cases) {
    // The expected message is the error's whole text or its beginning.
    std::string e = Error(c.json);
    EXPECT_EQ(e.substr(0, std::string(c.error).size()), c.error) << c.json;
  }
}

TEST(Model, InvalidJsonNamesLineAndColumn) {
  std::string e = Error("{\n  \"class_name\": \"Sequential\",\n  \"config\": {,}\n}");
  EXPECT_EQ(e.rfind("m.json: invalid JSON at line 3, column 14: ", 0), 0u) << e;
}

}  // namespace
}  // namespace edl::nn::keras
