#include "nn/metrics/metrics_from_json.h"

#include <gtest/gtest.h>

#include "nn/metrics/confusion_metrics.h"

namespace edl::nn::metrics {
namespace {

using tensor::Tensor;

std::vector<std::string> Names(const std::vector<std::unique_ptr<Metric>>& m) {
  std::vector<std::string> names;
  for (const auto& metric : m) names.push_back(metric->name());
  return names;
}

TEST(MetricsFromJson, AccuracyResolvesFromTheLossLikeKeras) {
  const Tensor labels = Tensor::FromInts({2}, {1, 0});
  const Tensor scores = Tensor::FromVector({2, 2}, {0.2f, 0.8f, 0.3f, 0.7f});
  auto sparse = MetricsFromJson(R"(["accuracy"])", "sparse_categorical_crossentropy", "m.json");
  ASSERT_TRUE(sparse.ok()) << sparse.status().message();
  (*sparse)[0]->Update(labels, scores);
  EXPECT_DOUBLE_EQ((*sparse)[0]->Result(), 0.5);  // sparse: labels are ids
  EXPECT_EQ((*sparse)[0]->name(), "accuracy");

  auto binary = MetricsFromJson(R"(["acc"])", "BinaryCrossentropy", "m.json");
  ASSERT_TRUE(binary.ok()) << binary.status().message();
  (*binary)[0]->Update(Tensor::FromVector({2, 1}, {1, 0}),
                       Tensor::FromVector({2, 1}, {0.9f, 0.6f}));
  EXPECT_DOUBLE_EQ((*binary)[0]->Result(), 0.5);
  EXPECT_EQ((*binary)[0]->name(), "acc");

  auto categorical = MetricsFromJson(R"(["accuracy"])", "categorical_crossentropy", "m.json");
  ASSERT_TRUE(categorical.ok());
  (*categorical)[0]->Update(Tensor::FromVector({2, 2}, {0, 1, 0, 1}), scores);
  EXPECT_DOUBLE_EQ((*categorical)[0]->Result(), 1.0);
}

TEST(MetricsFromJson, ReadsNamesAndObjectsWithKerasNames) {
  auto m = MetricsFromJson(
      R"(["AUC", "mse", "Precision", "recall",
          {"class_name": "AUC", "config": {"name": "my_auc", "num_thresholds": 50,
           "curve": "ROC", "summation_method": "interpolation", "thresholds": null,
           "multi_label": false, "label_weights": null, "dtype": "float32"}},
          {"module": "keras.metrics", "class_name": "BinaryAccuracy",
           "config": {"threshold": 0.7}, "registered_name": null},
          {"class_name": "SparseCategoricalAccuracy"},
          {"class_name": "MeanAbsoluteError", "config": {"name": "mae"}}])",
      "mse", "m.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(Names(*m),
            (std::vector<std::string>{"auc", "mse", "precision", "recall", "my_auc",
                                      "binary_accuracy", "sparse_categorical_accuracy", "mae"}));
  auto* auc = dynamic_cast<Auc*>((*m)[4].get());
  ASSERT_NE(auc, nullptr);
  EXPECT_EQ(auc->thresholds().size(), 50u);
  (*m)[5]->Update(Tensor::FromVector({1}, {1}), Tensor::FromVector({1}, {0.65f}));
  EXPECT_DOUBLE_EQ((*m)[5]->Result(), 0.0);  // 0.65 is below 0.7
}

TEST(MetricsFromJson, AnAucFromLogitsOverProbabilitiesAppliesNoSecondSigmoid) {
  // Scores spread over (0, 1): a second sigmoid would squeeze them into
  // (0.5, 0.73), a few of the 5 thresholds, and lose the ranking.
  const Tensor labels = Tensor::FromVector({4, 1}, {0, 1, 0, 1});
  const Tensor probabilities = Tensor::FromVector({4, 1}, {0.1f, 0.3f, 0.6f, 0.9f});
  const char* spec =
      R"([{"class_name": "AUC", "config": {"num_thresholds": 5, "from_logits": true}}])";
  auto plain = MetricsFromJson(R"([{"class_name": "AUC", "config": {"num_thresholds": 5}}])",
                               "binary_crossentropy", "m.json");
  auto given = MetricsFromJson(spec, "binary_crossentropy", "m.json",
                               /*outputs_are_probabilities=*/true);
  auto twice = MetricsFromJson(spec, "binary_crossentropy", "m.json");
  ASSERT_TRUE(plain.ok() && given.ok() && twice.ok());
  for (auto* m : {&plain, &given, &twice}) (**m)[0]->Update(labels, probabilities);
  EXPECT_DOUBLE_EQ((*given)[0]->Result(), (*plain)[0]->Result());
  EXPECT_NE((*twice)[0]->Result(), (*plain)[0]->Result());
}

TEST(MetricsFromJson, EmptyOrNullListGivesNoMetrics) {
  auto empty = MetricsFromJson("[]", "mse", "m.json");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto null = MetricsFromJson("null", "mse", "m.json");
  ASSERT_TRUE(null.ok());
  EXPECT_TRUE(null->empty());
}

void ExpectError(const std::string& json, const std::string& message) {
  auto m = MetricsFromJson(json, "sparse_categorical_crossentropy", "model.json");
  ASSERT_FALSE(m.ok()) << json;
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message(), message);
}

TEST(MetricsFromJson, MalformedEntriesNameTheFileEntryAndField) {
  ExpectError(R"(["accuracy", "f1"])",
              "model.json: metrics[1]: unknown metric \"f1\" (known: accuracy, "
              "acc, sparse_categorical_accuracy, categorical_accuracy, "
              "binary_accuracy, auc, precision, recall, mse, mean_squared_error, "
              "mae, mean_absolute_error, mean)");
  ExpectError(R"([{"class_name": "AUC", "config": {"num_thresholds": "x"}}])",
              "model.json: metrics[0]: config.num_thresholds: expected a number, "
              "got \"x\"");
  ExpectError(R"([{"class_name": "AUC", "config": {"num_thresholds": 1}}])",
              "model.json: metrics[0]: config.num_thresholds: expected an "
              "integer > 1, got 1.0");
  ExpectError(R"([{"class_name": "AUC", "config": {"curve": "PR"}}])",
              "model.json: metrics[0]: config.curve: only \"ROC\" is supported, "
              "got \"PR\"");
  ExpectError(R"([{"class_name": "AUC", "config": {"multi_label": true}}])",
              "model.json: metrics[0]: config.multi_label: only false is supported");
  ExpectError(R"([{"class_name": "Precision", "config": {"top_k": 5}}])",
              "model.json: metrics[0]: config.top_k: is not supported");
  ExpectError(R"([{"class_name": "BinaryAccuracy", "config": {"threshhold": 0.5}}])",
              "model.json: metrics[0]: config.threshhold: unknown field for "
              "BinaryAccuracy");
  ExpectError(R"([{"class_name": "BinaryAccuracy", "config": {"threshold": 2}}])",
              "model.json: metrics[0]: config.threshold: must be in [0, 1]");
  ExpectError(R"([42])",
              "model.json: metrics[0]: expected a name or {\"class_name\": ..., "
              "\"config\": {...}}, got 42");
  ExpectError(R"(42)", "model.json: metrics: expected a list such as [\"accuracy\"], got 42");
  ExpectError(R"(["acc")", "model.json: metrics: not valid JSON: [\"acc\"");
}

}  // namespace
}  // namespace edl::nn::metrics
