// Round trips with the real TensorFlow.js (tests/tfjs, `npm install` there):
// models built and randomized by TF.js load into edl and predict the same;
// models edl exports load into TF.js and predict the same. Skipped when
// node or tests/tfjs/node_modules is missing; under CI=true that fails
// (tests/testing/skip.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "base/file.h"
#include "nn/keras/model_spec.h"
#include "nn/keras/tfjs_export.h"
#include "nn/keras/zoo.h"
#include "tests/testing/paths.h"
#include "tests/testing/skip.h"

namespace edl::nn::keras {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kTfjsDir = edl::testing::SourceDir() + "/tests/tfjs";

bool HaveTfjs() {
  return std::system("node --version > /dev/null 2>&1") == 0 &&
         fs::exists(kTfjsDir + "/node_modules/@tensorflow/tfjs");
}

// In CI (CI=true) the round trip must run: scripts/test.sh installs tfjs.
// Elsewhere it is skipped when node or the npm packages are missing.
#define EDL_REQUIRE_TFJS()                                                    \
  do {                                                                        \
    if (HaveTfjs()) break;                                                    \
    EDL_SKIP_OR_FAIL_IN_CI(                                                   \
        "node (Debian package nodejs) or tests/tfjs/node_modules is missing " \
        "(run npm ci in tests/tfjs, as scripts/test.sh does)");               \
  } while (0)

// Runs a node script in tests/tfjs; returns its exit status.
int RunNode(const std::string& args) {
  std::string cmd = "cd '" + kTfjsDir + "' && node " + args + " > /dev/null";
  return std::system(cmd.c_str());
}

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() /
                 ("edl_tfjs_" + name + "_" + std::to_string(std::random_device()()));
  fs::create_directories(dir);
  return dir;
}

Tensor FromJson(const json& j) {
  Shape shape = j["shape"].get<Shape>();
  std::vector<float> data = j["data"].get<std::vector<float>>();
  if (j["dtype"] == "int32") {
    return Tensor::FromInts(shape, std::vector<int64_t>(data.begin(), data.end()));
  }
  return Tensor::FromVector(shape, data);
}

json ToJson(const Tensor& t) {
  return {{"shape", t.shape()},
          {"dtype", t.dtype() == tensor::DType::kInt64 ? "int32" : "float32"},
          {"data", t.ToVector()}};
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4) << what << " element " << i;
  }
}

TEST(TfjsRoundTrip, ModelsBuiltByTfjsPredictTheSameInEdl) {
  EDL_REQUIRE_TFJS();
  fs::path dir = TempDir("import");
  ASSERT_EQ(RunNode("build_models.js '" + dir.string() + "'"), 0);
  json names = json::parse(ReadFile((dir / "index.json").string()).value());
  ASSERT_GE(names.size(), 6u);
  for (const auto& n : names) {
    std::string name = n.get<std::string>();
    SCOPED_TRACE(name);
    auto spec = LoadModelSpec((dir / name / "model.json").string());
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    auto model = BuildModel(*spec, 1);
    ASSERT_TRUE(model.ok()) << model.status().message();
    json io = json::parse(ReadFile((dir / name / "io.json").string()).value());
    std::vector<Tensor> inputs;
    for (const auto& x : io["inputs"]) inputs.push_back(FromJson(x));
    NoGradGuard no_grad;
    std::vector<Var> outputs = (*model)->Forward(inputs, false);
    ASSERT_EQ(outputs.size(), io["outputs"].size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      EXPECT_EQ(outputs[i].shape(), io["outputs"][i]["shape"].get<Shape>());
      ExpectNear(outputs[i].value().ToVector(), io["outputs"][i]["data"].get<std::vector<float>>(),
                 name);
    }
  }
  fs::remove_all(dir);
}

// Random inputs for a model: floats N(0, 1), ids in [0, 5) (also for float
// inputs of a model with embeddings).
std::vector<Tensor> RandomInputs(const Model& model, int64_t batch, std::mt19937_64& rng) {
  std::vector<Tensor> out;
  std::normal_distribution<float> normal;
  bool embeds = model.ToKerasJson().find("\"Embedding\"") != std::string::npos;
  for (const ModelInput& in : model.inputs()) {
    Shape shape = in.shape;
    shape.insert(shape.begin(), batch);
    int64_t n = tensor::NumElements(shape);
    if (embeds && in.dtype == tensor::DType::kFloat32) {
      std::vector<float> v(n);
      for (auto& x : v) x = static_cast<float>(rng() % 5);
      out.push_back(Tensor::FromVector(shape, v));
    } else if (in.dtype == tensor::DType::kInt64) {
      std::vector<int64_t> ids(n);
      for (auto& v : ids) v = static_cast<int64_t>(rng() % 5);
      out.push_back(Tensor::FromInts(shape, ids));
    } else {
      std::vector<float> v(n);
      for (auto& x : v) x = normal(rng);
      out.push_back(Tensor::FromVector(shape, v));
    }
  }
  return out;
}

// Exports the model, predicts with TF.js and compares with edl.
void ExpectTfjsAgrees(Model& model, const ModelSpec& spec, const std::string& what) {
  SCOPED_TRACE(what);
  std::mt19937_64 rng(5);
  // Non-trivial BatchNormalization statistics.
  for (Parameter* p : model.parameters()) {
    if (p->name.ends_with("moving_mean") || p->name.ends_with("moving_variance")) {
      std::uniform_real_distribution<float> u(0.5f, 1.5f);
      for (int64_t i = 0; i < p->value.numel(); ++i) p->value.f32()[i] = u(rng);
    }
  }
  fs::path dir = TempDir("export");
  ASSERT_TRUE(ExportTfjs(model, spec, (dir / "model").string()).ok());
  std::vector<Tensor> inputs = RandomInputs(model, 3, rng);
  json in = {{"inputs", json::array()}};
  for (const Tensor& t : inputs) in["inputs"].push_back(ToJson(t));
  std::ofstream((dir / "in.json").string()) << in.dump();
  ASSERT_EQ(RunNode("predict.js '" + (dir / "model").string() + "' '" + (dir / "in.json").string() +
                    "' '" + (dir / "out.json").string() + "'"),
            0);
  json out = json::parse(ReadFile((dir / "out.json").string()).value());
  NoGradGuard no_grad;
  std::vector<Var> outputs = model.Forward(inputs, false);
  ASSERT_EQ(outputs.size(), out["outputs"].size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    ExpectNear(outputs[i].value().ToVector(), out["outputs"][i]["data"].get<std::vector<float>>(),
               what);
  }
  // The export also loads back into edl with the same weights.
  auto again = LoadModelSpec((dir / "model" / "model.json").string());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->loss_json, spec.loss_json);
  auto rebuilt = BuildModel(*again, 99);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().message();
  std::vector<Var> outputs2 = (*rebuilt)->Forward(inputs, false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(outputs2[i].value().ToVector(), outputs[i].value().ToVector());
  }
  fs::remove_all(dir);
}

TEST(TfjsRoundTrip, ZooModelsExportedByEdlPredictTheSameInTfjs) {
  EDL_REQUIRE_TFJS();
  for (const std::string& name : ZooNames()) {
    if (name == "transformer_encoder") continue;  // TF.js has no MultiHeadAttention
    auto spec = LoadModelSpec("zoo:" + name);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    for (uint64_t seed : {1, 2}) {
      auto model = BuildModel(*spec, seed);
      ASSERT_TRUE(model.ok()) << model.status().message();
      ExpectTfjsAgrees(**model, *spec, name + " seed " + std::to_string(seed));
    }
  }
}

TEST(TfjsRoundTrip, EdlExportsOfTfjsBuiltModelsPredictTheSameInTfjs) {
  EDL_REQUIRE_TFJS();
  fs::path dir = TempDir("reexport");
  ASSERT_EQ(RunNode("build_models.js '" + dir.string() + "'"), 0);
  json names = json::parse(ReadFile((dir / "index.json").string()).value());
  for (const auto& n : names) {
    auto spec = LoadModelSpec((dir / n.get<std::string>() / "model.json").string());
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    ModelSpec fresh = *spec;
    fresh.initial_weights.clear();  // edl's own random initialization
    auto model = BuildModel(fresh, 4);
    ASSERT_TRUE(model.ok()) << model.status().message();
    ExpectTfjsAgrees(**model, fresh, n.get<std::string>());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace edl::nn::keras

namespace edl::nn::keras {
namespace {

TEST(TfjsRoundTrip, AugmentationInANestedModelIsLeftOutAndTfjsPredictsAsEdl) {
  EDL_REQUIRE_TFJS();
  // Keras' usual pattern: a Sequential of augmentation layers called first
  // inside a functional model, then another augmentation layer.
  const std::string text = R"({"model": {"class_name": "Functional", "config": {
    "name": "nested_augmentation", "layers": [
      {"name": "image", "class_name": "InputLayer", "config": {"name": "image", "batch_input_shape": [null, 8, 8, 3]}, "inbound_nodes": []},
      {"name": "augment", "class_name": "Sequential", "config": {"name": "augment", "layers": [
         {"class_name": "InputLayer", "config": {"name": "augment_in", "batch_input_shape": [null, 8, 8, 3]}},
         {"class_name": "RandomFlip", "config": {"name": "flip"}},
         {"class_name": "RandomRotation", "config": {"name": "rotate", "factor": 0.1}}]},
       "inbound_nodes": [[["image", 0, 0, {}]]]},
      {"name": "contrast", "class_name": "RandomContrast", "config": {"name": "contrast", "factor": 0.2}, "inbound_nodes": [[["augment", 0, 0, {}]]]},
      {"name": "conv", "class_name": "Conv2D", "config": {"name": "conv", "filters": 4, "kernel_size": [3, 3]}, "inbound_nodes": [[["contrast", 0, 0, {}]]]},
      {"name": "flat", "class_name": "Flatten", "config": {"name": "flat"}, "inbound_nodes": [[["conv", 0, 0, {}]]]},
      {"name": "logits", "class_name": "Dense", "config": {"name": "logits", "units": 3}, "inbound_nodes": [[["flat", 0, 0, {}]]]}],
    "input_layers": [["image", 0, 0]], "output_layers": [["logits", 0, 0]]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}})";
  auto spec = ParseModelSpec(text, "nested.json", "");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto model = BuildModel(*spec, 3);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ExpectTfjsAgrees(**model, *spec, "nested augmentation");
}

}  // namespace
}  // namespace edl::nn::keras
