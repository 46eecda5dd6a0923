// Model specs: the wrapper, bare Keras JSON, TF.js model.json with weight
// shards, the zoo, and malformed specs.
#include "nn/keras/model_spec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "nn/keras/zoo.h"

namespace edl::nn::keras {
namespace {

namespace fs = std::filesystem;

const char kDense[] = R"({"class_name": "Sequential", "config": {"layers": [
  {"class_name": "Dense", "config": {"name": "d", "units": 2, "batch_input_shape": [null, 3]}}]}})";

std::string SpecError(const std::string& text, const std::string& dir = "") {
  auto s = ParseModelSpec(text, "model.json", dir);
  if (!s.ok()) return s.status().message();
  auto m = BuildModel(*s, 1);
  return m.ok() ? "OK" : m.status().message();
}

TEST(ModelSpec, ReadsTheWrapper) {
  auto s = ParseModelSpec(std::string(R"({"model": )") + kDense +
                              R"(, "loss": "mse", "optimizer": {"class_name": "SGD", "config": {}},
                               "metrics": ["mae"], "input": {"format": "csv"}})",
                          "model.json", "");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->loss_json, "\"mse\"");
  EXPECT_EQ(s->metrics_json, "[\"mae\"]");
  EXPECT_EQ(s->input_json, "{\"format\":\"csv\"}");
  EXPECT_TRUE(BuildModel(*s, 1).ok());
}

TEST(ModelSpec, ReadsABareKerasModel) {
  auto s = ParseModelSpec(kDense, "model.json", "");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->loss_json, "");
  EXPECT_EQ(s->model_path, "");
}

TEST(ModelSpec, LoadsEveryZooModel) {
  ASSERT_EQ(ZooNames(),
            (std::vector<std::string>{"cifar10_resnet", "cifar10_resnet50", "criteo_deepfm", "dcn",
                                      "fashion_mnist_cnn", "fashion_mnist_mlp", "image_folder_cnn",
                                      "imdb_bilstm", "mobilenet_v2", "planted_deepfm",
                                      "transformer_encoder", "wide_and_deep"}));
  for (const std::string& name : ZooNames()) {
    auto s = LoadModelSpec("zoo:" + name);
    ASSERT_TRUE(s.ok()) << s.status().message();
    auto m = BuildModel(*s, 1);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_FALSE(ZooDescription(name).empty());
    EXPECT_FALSE(s->loss_json.empty());
  }
  // The ResNet: 15 convolutions (13 3x3, 2 1x1 projections), 6 residual adds.
  auto resnet = BuildModel(LoadModelSpec("zoo:cifar10_resnet").value(), 1);
  EXPECT_EQ((*resnet)->output_shapes(), (std::vector<Shape>{{10}}));
  EXPECT_NE((*resnet)->Summary().find("s3b2_add (Add)"), std::string::npos) << (*resnet)->Summary();
  auto cnn = BuildModel(LoadModelSpec("zoo:fashion_mnist_cnn").value(), 1);
  EXPECT_EQ((*cnn)->output_shapes(), (std::vector<Shape>{{10}}));
  EXPECT_NE((*cnn)->Summary().find("Non-trainable params: 128"), std::string::npos);
  auto deepfm = BuildModel(LoadModelSpec("zoo:planted_deepfm").value(), 1);
  ASSERT_EQ((*deepfm)->inputs().size(), 2u);
  EXPECT_EQ((*deepfm)->inputs()[1].dtype, tensor::DType::kInt64);
  auto criteo = BuildModel(LoadModelSpec("zoo:criteo_deepfm").value(), 1);
  ASSERT_EQ((*criteo)->inputs().size(), 2u);
  EXPECT_EQ((*criteo)->inputs()[0].shape, (Shape{13}));
  EXPECT_EQ((*criteo)->inputs()[1].shape, (Shape{26}));
  EXPECT_EQ((*criteo)->EmbeddingInputs().size(), 2u);
  // The image folder CNN: augmentation layers first, no weights in them.
  auto images = BuildModel(LoadModelSpec("zoo:image_folder_cnn").value(), 1);
  EXPECT_EQ((*images)->inputs()[0].shape, (Shape{64, 64, 3}));
  EXPECT_NE((*images)->Summary().find("flip (RandomFlip)"), std::string::npos)
      << (*images)->Summary();
  EXPECT_EQ(LoadModelSpec("zoo:resnet").status().message(),
            "zoo:resnet: no such model in the zoo (known: cifar10_resnet, cifar10_resnet50, "
            "criteo_deepfm, dcn, "
            "fashion_mnist_cnn, fashion_mnist_mlp, image_folder_cnn, imdb_bilstm, mobilenet_v2, "
            "planted_deepfm, transformer_encoder, wide_and_deep)");
}

class TfjsDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("edl_spec_" + std::to_string(std::random_device()()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void WriteShard(const std::string& name, const std::vector<float>& values) {
    std::ofstream f(dir_ / name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  std::string ModelJson(const std::string& manifest) {
    return std::string(R"({"format": "layers-model", "modelTopology": {"model_config": )") +
           kDense + R"(, "training_config": {"loss": "meanSquaredError",
             "optimizer_config": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
             "metrics": ["accuracy"]}}, "weightsManifest": )" +
           manifest + "}";
  }
  fs::path dir_;
};

TEST_F(TfjsDir, LoadsWeightsFromShardsInOrder) {
  WriteShard("a.bin", {1, 2, 3, 4});
  WriteShard("b.bin", {5, 6, 7, 8});
  auto s = ParseModelSpec(ModelJson(R"([{"paths": ["a.bin", "b.bin"], "weights": [
      {"name": "d/kernel", "shape": [3, 2], "dtype": "float32"},
      {"name": "d/bias", "shape": [2], "dtype": "float32"}]}])"),
                          "model.json", dir_.string());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->loss_json, "\"mean_squared_error\"");
  EXPECT_EQ(s->optimizer_json, R"({"class_name":"Adam","config":{"learning_rate":0.01}})");
  auto m = BuildModel(*s, 1);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->parameters()[1]->value.ToVector(), (std::vector<float>{7, 8}));
}

TEST_F(TfjsDir, RejectsBadManifests) {
  WriteShard("a.bin", {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(SpecError(ModelJson(R"([{"paths": ["a.bin"], "weights": [
      {"name": "d/kernel", "shape": [3, 2], "dtype": "float32"},
      {"name": "d/bias", "shape": [3], "dtype": "float32"}]}])"),
                      dir_.string()),
            "model.json: weightsManifest[0].weights[1]: the shards of group 0 hold 32 bytes, "
            "too few for weight \"d/bias\" [3]");
  EXPECT_EQ(SpecError(ModelJson(R"([{"paths": ["a.bin"], "weights": [
      {"name": "d/kernel", "shape": [4, 2], "dtype": "float32"}]}])"),
                      dir_.string()),
            "model.json: weightsManifest: weight \"d/kernel\" has shape [4, 2], but "
            "\"d/kernel\" needs float32 [3, 2]");
  EXPECT_EQ(SpecError(ModelJson(R"([{"paths": ["a.bin"], "weights": [
      {"name": "d/kernel", "shape": [3, 2], "dtype": "int32"}]}])"),
                      dir_.string()),
            "model.json: weightsManifest[0].weights[0]: weight \"d/kernel\" has dtype \"int32\"; "
            "only float32 is supported");
  EXPECT_EQ(SpecError(ModelJson(R"([{"paths": ["a.bin"], "weights": [
      {"name": "d/kernel", "shape": [3, 2]}, {"name": "other/bias", "shape": [2]}]}])"),
                      dir_.string())
                .substr(0, 66),
            "model.json: weightsManifest: weight \"other/bias\" matches no weight");
  EXPECT_NE(SpecError(ModelJson(R"([{"paths": ["missing.bin"], "weights": []}])"), dir_.string())
                .find("missing.bin"),
            std::string::npos);
}

TEST(ModelSpec, MalformedSpecsGetOneLineErrors) {
  EXPECT_EQ(SpecError("{\"model\": 3}"), "model.json: model must be a Keras model JSON object");
  EXPECT_EQ(SpecError(std::string("{\"model\": ") + kDense + ", \"los\": \"mse\"}"),
            "model.json: unknown field \"los\"; a model spec has model, loss, optimizer, "
            "metrics, input");
  EXPECT_EQ(SpecError("{\"layers\": []}"),
            "model.json: expected a model spec ({\"model\": ...}), a Keras model JSON "
            "(\"class_name\") or a TF.js model.json (\"modelTopology\")");
  EXPECT_EQ(
      SpecError("{\"model\": {\n\"class_name\": \"Sequential\"\n\"config\": {}}}").substr(0, 46),
      "model.json: invalid JSON at line 3, column 8: ");
  EXPECT_NE(SpecError(std::string("{\"model\": ") + kDense + ", \"loss\": \"nonsense\"}")
                .find("model.json: loss"),
            std::string::npos);
  EXPECT_NE(SpecError(std::string("{\"model\": ") + kDense + ", \"input\": {\"scael\": 1}}")
                .find("model.json: input"),
            std::string::npos);
  EXPECT_EQ(SpecError(std::string("{\"model\": ") + kDense + ", \"metrics\": \"acc\"}"),
            "model.json: metrics must be a list, got \"acc\"");
  EXPECT_EQ(SpecError(R"({"model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "Dense", "config": {"units": 2, "batch_input_shape": [null, 3]}},
      {"class_name": "ConvLSTM2D", "config": {}}]}}})")
                .substr(0, 72),
            "model.json: model.config.layers[1]: unsupported layer class \"ConvLSTM2D\"");
  EXPECT_EQ(LoadModelSpec("/nonexistent/model.json").ok(), false);
}

}  // namespace
}  // namespace edl::nn::keras
