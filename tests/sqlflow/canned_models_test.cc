// Every canned model builds into a model edl can run, with the inputs the
// features give and the outputs the label asks for; bad attributes and
// labels are refused naming them.
#include "sqlflow/canned_models.h"

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "nn/keras/model.h"
#include "nn/keras/model_spec.h"

namespace edl::sqlflow {
namespace {

FeatureSpec Features(bool regression) {
  FeatureSpec f;
  f.num_numeric = 3;
  f.num_categorical = 2;
  f.num_ids = 40;
  f.regression = regression;
  f.num_classes = regression ? 0 : 4;
  f.input_json =
      nlohmann::json{
          {"format", "csv"},
          {"label", "y"},
          {"numeric", {"a", "b", "c"}},
          {"categorical",
           {{{"column", "d"}, {"hash_buckets", 30}}, {{"column", "e"}, {"num_buckets", 10}}}},
          {"categorical_layout", "concat_with_offsets"}}
          .dump();
  return f;
}

// The model's output width on a batch of 5 zero records.
int64_t OutputWidth(const std::string& spec_json) {
  auto spec = nn::keras::ParseModelSpec(spec_json, "canned", "");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  if (!spec.ok()) return -1;
  auto model = nn::keras::BuildModel(*spec, 1);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return -1;
  std::vector<tensor::Tensor> inputs;
  for (const auto& in : (*model)->inputs()) {
    tensor::Shape shape = {5};
    for (int64_t d : in.shape) shape.push_back(d);
    inputs.push_back(tensor::Tensor::Zeros(shape, in.dtype));
  }
  EXPECT_EQ(inputs.size(), 2u);
  auto out = (*model)->Forward(inputs, /*training=*/false);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value().dim(0), 5);
  return out[0].value().dim(1);
}

TEST(CannedModels, EveryClassifierBuildsWithOneLogitPerClass) {
  for (const char* name : {"DNNClassifier", "LinearClassifier", "WideAndDeep", "DeepFM"}) {
    SCOPED_TRACE(name);
    auto spec = CannedModelSpec(name, {}, Features(false));
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    EXPECT_EQ(OutputWidth(*spec), 4);
    EXPECT_NE(spec->find("SparseCategoricalCrossentropy"), std::string::npos);
  }
}

TEST(CannedModels, EveryRegressorBuildsWithOneValue) {
  for (const char* name : {"DNNRegressor", "LinearRegressor", "WideAndDeep", "DeepFM"}) {
    SCOPED_TRACE(name);
    auto spec = CannedModelSpec(name, {}, Features(true));
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    EXPECT_EQ(OutputWidth(*spec), 1);
    EXPECT_NE(spec->find("mean_squared_error"), std::string::npos);
  }
}

TEST(CannedModels, AttributesShapeTheModel) {
  std::vector<Attribute> with = {{"model.hidden_units", "[7, 5]", "line 1, column 1"},
                                 {"model.n_classes", "6", "line 1, column 2"},
                                 {"model.optimizer", "\"SGD\"", "line 1, column 3"},
                                 {"model.learning_rate", "0.5", "line 1, column 4"}};
  auto spec = CannedModelSpec("DNNClassifier", with, Features(false));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(OutputWidth(*spec), 6);
  const auto j = nlohmann::json::parse(*spec);
  EXPECT_EQ(j["optimizer"]["class_name"], "SGD");
  EXPECT_EQ(j["optimizer"]["config"]["learning_rate"], 0.5);
  EXPECT_NE(spec->find("\"units\":7"), std::string::npos);
}

TEST(CannedModels, RefusesBadAttributesAndUnsuitableLabels) {
  auto e = CannedModelSpec("DNNClassifier", {{"model.hidden_unit", "[3]", "line 2, column 6"}},
                           Features(false));
  EXPECT_EQ(e.status().message().rfind("line 2, column 6: unknown attribute model.hidden_unit", 0),
            0u)
      << e.status().ToString();
  e = CannedModelSpec("DNNClassifier", {{"model.hidden_units", "[0]", "line 1, column 9"}},
                      Features(false));
  EXPECT_NE(e.status().message().find("must be a list of positive integers"), std::string::npos);
  e = CannedModelSpec("DNNClassifier", {{"model.n_classes", "3", "at"}}, Features(false));
  EXPECT_NE(e.status().message().find("model.n_classes is 3 but the LABEL has classes up to 3"),
            std::string::npos)
      << e.status().ToString();
  e = CannedModelSpec("LinearClassifier", {}, Features(true));
  EXPECT_NE(e.status().message().find("is a classifier, but the LABEL holds values"),
            std::string::npos);
  EXPECT_EQ(DefaultModel(Features(true)), "DNNRegressor");
  EXPECT_EQ(DefaultModel(Features(false)), "DNNClassifier");
}

}  // namespace
}  // namespace edl::sqlflow
