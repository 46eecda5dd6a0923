// Models nested as layers of other models (transfer learning): they compute
// what the same layers compute inline, their node indices follow the JSON's
// references, a frozen one trains nothing and runs batch normalization in
// inference mode, a shared one keeps one set of weights, they export and
// re-import, and their errors name where in the nested config they are.
#include "nn/keras/nested_model.h"

#include <gtest/gtest.h>

#include <random>

#include "nn/functional.h"
#include "nn/keras/model.h"
#include "tests/nn/keras/model_test_util.h"

namespace edl::nn::keras {
namespace {

using testing::Build;
using testing::Error;
using testing::Names;

Tensor RandomInput(const Shape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(tensor::NumElements(shape));
  for (float& x : v) x = d(rng);
  return Tensor::FromVector(shape, v);
}

// Copies every weight of `from` into `to` by name.
void CopyWeights(Model& from, Model& to) {
  std::vector<NamedTensor> w;
  for (Parameter* p : from.parameters()) w.push_back({p->name, p->value.Clone()});
  Status s = to.SetWeights(w);
  ASSERT_TRUE(s.ok()) << s.message();
}

// A base (Dense, BatchNormalization) nested in a model with a Dense head, as
// Keras 2 / TF.js write it: the base's call is node 1 (node 0 is its own).
std::string TransferJson(const std::string& base_extra = "") {
  return R"({"class_name": "Functional", "config": {"name": "outer", "layers": [
    {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4]},
     "inbound_nodes": []},
    {"class_name": "Functional", "name": "base", "config": {"name": "base", )" +
         base_extra + R"(
       "layers": [
         {"class_name": "InputLayer", "name": "base_in",
          "config": {"name": "base_in", "batch_input_shape": [null, 4]}, "inbound_nodes": []},
         {"class_name": "Dense", "name": "feat", "config": {"name": "feat", "units": 3},
          "inbound_nodes": [[["base_in", 0, 0, {}]]]},
         {"class_name": "BatchNormalization", "name": "bn", "config": {"name": "bn"},
          "inbound_nodes": [[["feat", 0, 0, {}]]]}],
       "input_layers": [["base_in", 0, 0]], "output_layers": [["bn", 0, 0]]},
     "inbound_nodes": [[["x", 0, 0, {}]]]},
    {"class_name": "Dense", "name": "head", "config": {"name": "head", "units": 2},
     "inbound_nodes": [[["base", 1, 0, {}]]]}],
   "input_layers": [["x", 0, 0]], "output_layers": [["head", 0, 0]]}})";
}

// The same layers inline.
const char kFlatJson[] = R"({"class_name": "Functional", "config": {"name": "flat", "layers": [
    {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4]},
     "inbound_nodes": []},
    {"class_name": "Dense", "name": "feat", "config": {"name": "feat", "units": 3},
     "inbound_nodes": [[["x", 0, 0, {}]]]},
    {"class_name": "BatchNormalization", "name": "bn", "config": {"name": "bn"},
     "inbound_nodes": [[["feat", 0, 0, {}]]]},
    {"class_name": "Dense", "name": "head", "config": {"name": "head", "units": 2},
     "inbound_nodes": [[["bn", 0, 0, {}]]]}],
   "input_layers": [["x", 0, 0]], "output_layers": [["head", 0, 0]]}})";

TEST(NestedModel, ComputesWhatItsLayersComputeInlineForwardAndBackward) {
  auto nested = Build(TransferJson()), flat = Build(kFlatJson);
  EXPECT_EQ(Names(*nested), (std::vector<std::string>{
                                "feat/kernel", "feat/bias", "bn/gamma", "bn/beta", "bn/moving_mean",
                                "bn/moving_variance", "head/kernel", "head/bias"}));
  CopyWeights(*nested, *flat);
  const Tensor x = RandomInput({5, 4}, 3);
  for (bool training : {false, true}) {
    std::vector<Var> a = nested->Forward({x}, training), b = flat->Forward({x}, training);
    EXPECT_EQ(a[0].value().ToVector(), b[0].value().ToVector()) << training;
    Backward(fn::Sum(fn::Mul(a[0], a[0])));
    Backward(fn::Sum(fn::Mul(b[0], b[0])));
  }
  std::vector<Parameter*> pa = nested->parameters(), pb = flat->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    ASSERT_EQ(pa[i]->name, pb[i]->name);
    EXPECT_EQ(pa[i]->value.ToVector(), pb[i]->value.ToVector()) << pa[i]->name;  // moving stats
    if (pa[i]->trainable) {
      EXPECT_EQ(pa[i]->grad.ToVector(), pb[i]->grad.ToVector()) << pa[i]->name;
    }
  }
}

TEST(NestedModel, AFrozenModelTrainsNothingAndRunsBatchNormInInferenceMode) {
  auto m = Build(TransferJson(R"("trainable": false,)"));
  for (Parameter* p : m->parameters()) {
    const bool head = p->name.starts_with("head/");
    EXPECT_EQ(p->trainable, head) << p->name;
  }
  const Tensor x = RandomInput({6, 4}, 4);
  Parameter* mean = nullptr;
  for (Parameter* p : m->parameters()) {
    if (p->name == "bn/moving_mean") mean = p;
  }
  ASSERT_NE(mean, nullptr);
  const std::vector<float> before = mean->value.ToVector();
  std::vector<Var> training = m->Forward({x}, true), inference = m->Forward({x}, false);
  EXPECT_EQ(training[0].value().ToVector(), inference[0].value().ToVector());
  EXPECT_EQ(mean->value.ToVector(), before);
  // The frozen state survives an export.
  auto again = Build(m->ToKerasJson());
  for (Parameter* p : again->parameters()) {
    EXPECT_EQ(p->trainable, p->name.starts_with("head/")) << p->name;
  }
}

TEST(NestedModel, FollowsTheNodeIndicesItsReferencesUse) {
  // Keras 3 writes the call of a nested Sequential as node 0, Keras 2 as
  // node 1 when the Sequential declares its input; a Sequential without an
  // input shape takes its call's shape and is node 0 everywhere.
  const std::string with_input = R"({"class_name": "Sequential", "name": "seq",
      "config": {"name": "seq", "layers": [
        {"class_name": "Dense", "config": {"name": "s1", "units": 3, "batch_input_shape": [null, 4]}}]},
      "inbound_nodes": [[["x", 0, 0, {}]]]})";
  const std::string without = R"({"class_name": "Sequential", "name": "seq",
      "config": {"name": "seq", "layers": [{"class_name": "Dense", "config": {"name": "s1", "units": 3}}]},
      "inbound_nodes": [[["x", 0, 0, {}]]]})";
  auto model = [](const std::string& nested, int node) {
    return R"({"class_name": "Functional", "config": {"name": "outer", "layers": [
      {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4]},
       "inbound_nodes": []}, )" +
           nested + R"(,
      {"class_name": "Dense", "name": "head", "config": {"name": "head", "units": 2},
       "inbound_nodes": [[["seq", )" +
           std::to_string(node) + R"(, 0, {}]]]}],
      "input_layers": [["x", 0, 0]], "output_layers": [["head", 0, 0]]}})";
  };
  for (const auto& [nested, node] :
       std::vector<std::pair<std::string, int>>{{with_input, 1}, {with_input, 0}, {without, 0}}) {
    SCOPED_TRACE(std::to_string(node));
    auto m = Build(model(nested, node));
    EXPECT_EQ(m->output_shapes(), (std::vector<Shape>{{2}}));
    EXPECT_EQ(m->Forward({RandomInput({2, 4}, 1)}, false)[0].shape(), (Shape{2, 2}));
    EXPECT_EQ(Names(*m),
              (std::vector<std::string>{"s1/kernel", "s1/bias", "head/kernel", "head/bias"}));
    // Exported, the nested Sequential declares its input: its call is node 1.
    const std::string exported = m->ToKerasJson();
    EXPECT_NE(exported.find(R"(["seq",1,0,{}])"), std::string::npos) << exported;
    auto again = Build(exported);
    CopyWeights(*m, *again);
    const Tensor x = RandomInput({3, 4}, 2);
    EXPECT_EQ(again->Forward({x}, false)[0].value().ToVector(),
              m->Forward({x}, false)[0].value().ToVector());
  }
}

TEST(NestedModel, ReadsKeras3sNestedFunctionalModel) {
  // Keras 3: {"args": ...} nodes, keras_history references, the nested
  // functional model's call as node 1, output_layers unwrapped.
  const std::string tensor = R"({"class_name": "__keras_tensor__", "config": {"keras_history": [)";
  auto m = Build(R"({"class_name": "Functional", "config": {"name": "k3", "layers": [
      {"module": "keras.layers", "class_name": "InputLayer", "name": "x",
       "config": {"batch_shape": [null, 4], "dtype": "float32", "name": "x"}, "inbound_nodes": []},
      {"module": "keras", "class_name": "Functional", "registered_name": "Functional", "name": "base",
       "config": {"name": "base", "trainable": false, "layers": [
         {"module": "keras.layers", "class_name": "InputLayer", "name": "b_in",
          "config": {"batch_shape": [null, 4], "dtype": "float32", "name": "b_in"}, "inbound_nodes": []},
         {"module": "keras.layers", "class_name": "Dense", "name": "b_dense",
          "config": {"name": "b_dense", "units": 3},
          "inbound_nodes": [{"args": [)" +
                 tensor + R"("b_in", 0, 0]}}], "kwargs": {}}]}],
         "input_layers": [["b_in", 0, 0]], "output_layers": [["b_dense", 0, 0]]},
       "build_config": {"input_shape": [null, 4]},
       "inbound_nodes": [{"args": [)" +
                 tensor + R"("x", 0, 0]}}], "kwargs": {"training": false}}]},
      {"module": "keras.layers", "class_name": "Dense", "name": "top", "config": {"name": "top", "units": 1},
       "inbound_nodes": [{"args": [)" +
                 tensor + R"("base", 1, 0]}}], "kwargs": {}}]}],
    "input_layers": ["x", 0, 0], "output_layers": ["top", 0, 0]}})");
  EXPECT_EQ(m->output_shapes(), (std::vector<Shape>{{1}}));
  EXPECT_EQ(Names(*m),
            (std::vector<std::string>{"b_dense/kernel", "b_dense/bias", "top/kernel", "top/bias"}));
  for (Parameter* p : m->parameters())
    EXPECT_EQ(p->trainable, p->name.starts_with("top/")) << p->name;
  EXPECT_EQ(m->Forward({RandomInput({2, 4}, 3)}, false)[0].shape(), (Shape{2, 1}));
}

TEST(NestedModel, ASharedNestedModelKeepsOneSetOfWeights) {
  auto m = Build(R"({"class_name": "Functional", "config": {"name": "siamese", "layers": [
    {"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 4]},
     "inbound_nodes": []},
    {"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 4]},
     "inbound_nodes": []},
    {"class_name": "Sequential", "name": "tower", "config": {"name": "tower", "layers": [
       {"class_name": "Dense", "config": {"name": "t", "units": 3, "batch_input_shape": [null, 4]}}]},
     "inbound_nodes": [[["a", 0, 0, {}]], [["b", 0, 0, {}]]]},
    {"class_name": "Subtract", "name": "diff", "config": {"name": "diff"},
     "inbound_nodes": [[["tower", 1, 0, {}], ["tower", 2, 0, {}]]]}],
   "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["diff", 0, 0]]}})");
  EXPECT_EQ(Names(*m), (std::vector<std::string>{"t/kernel", "t/bias"}));
  const Tensor x = RandomInput({2, 4}, 5);
  const std::vector<float> same = m->Forward({x, x}, false)[0].value().ToVector();
  EXPECT_EQ(same, std::vector<float>(6, 0.f));
}

TEST(NestedModel, EmbeddingTablesInsideReadTheOuterInputThatFeedsThem) {
  auto m = Build(R"({"class_name": "Functional", "config": {"name": "outer", "layers": [
    {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 2]},
     "inbound_nodes": []},
    {"class_name": "InputLayer", "name": "ids", "config": {"name": "ids", "batch_input_shape": [null, 3],
     "dtype": "int64"}, "inbound_nodes": []},
    {"class_name": "Functional", "name": "enc", "config": {"name": "enc", "layers": [
       {"class_name": "InputLayer", "name": "e_in", "config": {"name": "e_in",
        "batch_input_shape": [null, 3], "dtype": "int64"}, "inbound_nodes": []},
       {"class_name": "Embedding", "name": "emb", "config": {"name": "emb", "input_dim": 7,
        "output_dim": 2}, "inbound_nodes": [[["e_in", 0, 0, {}]]]},
       {"class_name": "Flatten", "name": "fl", "config": {"name": "fl"},
        "inbound_nodes": [[["emb", 0, 0, {}]]]}],
      "input_layers": [["e_in", 0, 0]], "output_layers": [["fl", 0, 0]]},
     "inbound_nodes": [[["ids", 0, 0, {}]]]},
    {"class_name": "Concatenate", "name": "cat", "config": {"name": "cat"},
     "inbound_nodes": [[["x", 0, 0, {}], ["enc", 1, 0, {}]]]}],
   "input_layers": [["x", 0, 0], ["ids", 0, 0]], "output_layers": [["cat", 0, 0]]}})");
  std::vector<Model::EmbeddingInput> tables = m->EmbeddingInputs();
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].input_index, 1u);
  EXPECT_EQ(tables[0].table->name, "emb/embeddings");
  EXPECT_EQ(m->InputIdLimit(0).input_dim, -1);
  const Model::IdLimit limit = m->InputIdLimit(1);
  EXPECT_EQ(limit.input_dim, 7);
  EXPECT_EQ(limit.description, "Embedding \"emb\" has input_dim 7 (inside nested model \"enc\")");
  EXPECT_EQ(
      m->Forward({RandomInput({2, 2}, 1), Tensor::FromInts({2, 3}, {0, 6, 1, 2, 3, 4})}, false)[0]
          .shape(),
      (Shape{2, 8}));
}

TEST(NestedModel, ANestedModelMayStartASequential) {
  auto m = Build(R"({"class_name": "Sequential", "config": {"name": "outer", "layers": [
    {"class_name": "Sequential", "config": {"name": "base", "layers": [
       {"class_name": "Dense", "config": {"name": "b1", "units": 3, "batch_input_shape": [null, 5]}}]}},
    {"class_name": "Dense", "config": {"name": "top", "units": 1}}]}})");
  ASSERT_EQ(m->inputs().size(), 1u);
  EXPECT_EQ(m->inputs()[0].shape, (Shape{5}));
  EXPECT_EQ(m->Forward({RandomInput({4, 5}, 6)}, false)[0].shape(), (Shape{4, 1}));
  EXPECT_NE(m->Summary().find("base (Sequential)"), std::string::npos) << m->Summary();
  auto again = Build(m->ToKerasJson());
  EXPECT_EQ(Names(*again), Names(*m));
}

TEST(NestedModel, ErrorsNameThePathIntoTheNestedConfig) {
  // A bad field inside.
  std::string bad = TransferJson();
  bad.replace(bad.find(R"("units": 3)"), 10, R"("units": -3)");
  EXPECT_EQ(Error(bad),
            "m.json: model.config.layers[1].config.layers[1] (Dense \"feat\"): units must be "
            "positive");
  // A call whose shape the nested model does not take.
  std::string wrong = TransferJson();
  wrong.replace(wrong.find(R"("batch_input_shape": [null, 4])"), 30,
                R"("batch_input_shape": [null, 7])");
  EXPECT_NE(Error(wrong).find("layer \"base\" (Functional): input 0 is [7], but the nested "
                              "model's input \"base_in\" takes [4]"),
            std::string::npos)
      << Error(wrong);
  // A nested layer with an outer layer's name: their weights would collide.
  std::string twice = TransferJson();
  for (size_t at; (at = twice.find("\"head\"")) != std::string::npos;) {
    twice.replace(at, 6, "\"feat\"");
  }
  EXPECT_NE(Error(twice).find("weight \"feat/kernel\" is made twice, by layer \"base\" and by "
                              "layer \"feat\""),
            std::string::npos)
      << Error(twice);
  // A model class edl does not know is still refused by name.
  EXPECT_NE(Error(R"({"class_name": "Sequential", "config": {"layers": [
      {"class_name": "InputLayer", "config": {"name": "i", "batch_input_shape": [null, 2]}},
      {"class_name": "CustomModel", "config": {"name": "c"}}]}})")
                .find("unsupported layer class \"CustomModel\""),
            std::string::npos);
}

}  // namespace
}  // namespace edl::nn::keras
