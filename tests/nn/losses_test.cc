#include "nn/losses.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/nn/gradient_check.h"

namespace edl::nn {
namespace {

using testing::ExpectGradientsMatch;
using testing::RandomTensor;

std::unique_ptr<Loss> Make(const std::string& name, bool from_logits = false,
                           float label_smoothing = 0.f) {
  LossOptions o;
  o.name = name;
  o.from_logits = from_logits;
  o.label_smoothing = label_smoothing;
  auto loss = MakeLoss(o);
  EXPECT_TRUE(loss.ok()) << loss.status().message();
  return std::move(loss).value();
}

float Value(const Loss& loss, const Tensor& y_pred, const Tensor& y_true) {
  return loss.Compute(Var(y_pred), y_true).value().item();
}

// Probabilities in (0.05, 0.95) for each row (a softmax of random logits).
Tensor RandomProbabilities(const Shape& shape, std::mt19937_64& rng) {
  Tensor t = RandomTensor(shape, rng, 0.2f, 1.f);
  const int64_t c = shape.back();
  for (int64_t r = 0; r < t.numel() / c; ++r) {
    float sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += t.f32()[r * c + j];
    for (int64_t j = 0; j < c; ++j) t.f32()[r * c + j] /= sum;
  }
  return t;
}

// Values from the Keras documentation examples.
TEST(Losses, MatchKerasDocumentedValues) {
  Tensor probs = Tensor::FromVector({2, 3}, {0.05f, 0.95f, 0.f, 0.1f, 0.8f, 0.1f});
  EXPECT_NEAR(Value(*Make("sparse_categorical_crossentropy"), probs, Tensor::FromInts({2}, {1, 2})),
              1.177, 1e-3);
  EXPECT_NEAR(Value(*Make("categorical_crossentropy"), probs,
                    Tensor::FromVector({2, 3}, {0, 1, 0, 0, 0, 1})),
              1.177, 1e-3);
  Tensor p2 = Tensor::FromVector({2, 2}, {0.6f, 0.4f, 0.4f, 0.6f});
  Tensor t2 = Tensor::FromVector({2, 2}, {0, 1, 0, 0});
  EXPECT_NEAR(Value(*Make("binary_crossentropy"), p2, t2), 0.815, 1e-3);
  EXPECT_NEAR(Value(*Make("huber"), p2, t2), 0.155, 1e-3);
  EXPECT_NEAR(Value(*Make("binary_crossentropy", true),
                    Tensor::FromVector({4}, {-18.6f, 0.51f, 2.94f, -12.8f}),
                    Tensor::FromVector({4}, {0, 1, 0, 0})),
              0.865, 1e-3);
  Tensor p3 = Tensor::FromVector({2, 2}, {1, 1, 1, 0});
  EXPECT_NEAR(Value(*Make("mse"), p3, t2), 0.5, 1e-6);
  EXPECT_NEAR(Value(*Make("mae"), p3, t2), 0.5, 1e-6);
}

TEST(Losses, SparseLabelsMayBeFloatColumns) {
  Tensor logits = Tensor::FromVector({2, 3}, {1, 2, 3, 0, 0, 5});
  auto loss = Make("SparseCategoricalCrossentropy", true);
  EXPECT_FLOAT_EQ(Value(*loss, logits, Tensor::FromInts({2}, {0, 2})),
                  Value(*loss, logits, Tensor::FromVector({2, 1}, {0, 2})));
}

TEST(Losses, FusedSparseCrossentropyEqualsLogSoftmaxPick) {
  Tensor logits = Tensor::FromVector({2, 3}, {1, 2, 3, 0, 0, 5});
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double lse1 = std::log(2 + std::exp(5.0));
  const double expected = ((lse0 - 1) + (lse1 - 5)) / 2;
  EXPECT_NEAR(
      Value(*Make("sparse_categorical_crossentropy", true), logits, Tensor::FromInts({2}, {0, 2})),
      expected, 1e-5);
}

TEST(Losses, ReduceOverSequenceRowsToo) {
  // [N=1, T=2, C=2]: mean over the two rows.
  Tensor logits = Tensor::FromVector({1, 2, 2}, {0, 0, 0, 0});
  EXPECT_NEAR(Value(*Make("sparse_categorical_crossentropy", true), logits,
                    Tensor::FromInts({1, 2}, {0, 1})),
              std::log(2.0), 1e-6);
}

struct LossCase {
  std::string name;
  bool from_logits;
  float label_smoothing;
  bool sparse;
  bool probabilities;  // y_pred must be a distribution / in (0, 1)
};

class LossGradient : public ::testing::TestWithParam<LossCase> {};

TEST_P(LossGradient, MatchesFiniteDifferences) {
  const LossCase c = GetParam();
  std::mt19937_64 rng(17);
  const Shape shape{3, 4};
  Tensor y_pred =
      c.probabilities ? RandomProbabilities(shape, rng) : RandomTensor(shape, rng, -2, 2);
  Tensor y_true;
  if (c.sparse) {
    y_true = Tensor::FromInts({3}, {1, 3, 0});
  } else if (c.name == "categorical_crossentropy") {
    y_true = Tensor::FromVector(shape, {0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0});
  } else if (c.name == "binary_crossentropy") {
    y_true = Tensor::FromVector(shape, {0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1});
  } else {
    y_true = RandomTensor(shape, rng, -2, 2);
    // Keep residuals off the kinks of |e| and huber's delta.
    for (int64_t i = 0; i < y_true.numel(); ++i) {
      const float e = y_pred.f32()[i] - y_true.f32()[i];
      if (std::abs(e) < 0.05f || std::abs(std::abs(e) - 1.f) < 0.05f) y_true.f32()[i] += 0.2f;
    }
  }
  auto loss = Make(c.name, c.from_logits, c.label_smoothing);
  testing::GradCheckOptions o;
  o.eps = 1e-3;
  ExpectGradientsMatch([&](auto& v) { return loss->Compute(v[0], y_true); }, {y_pred}, o);
}

INSTANTIATE_TEST_SUITE_P(
    AllLosses, LossGradient,
    ::testing::Values(LossCase{"sparse_categorical_crossentropy", true, 0, true, false},
                      LossCase{"sparse_categorical_crossentropy", false, 0, true, true},
                      LossCase{"categorical_crossentropy", true, 0, false, false},
                      LossCase{"categorical_crossentropy", true, 0.1f, false, false},
                      LossCase{"categorical_crossentropy", false, 0, false, true},
                      LossCase{"categorical_crossentropy", false, 0.2f, false, true},
                      LossCase{"binary_crossentropy", true, 0, false, false},
                      LossCase{"binary_crossentropy", true, 0.1f, false, false},
                      LossCase{"binary_crossentropy", false, 0, false, true},
                      LossCase{"mean_squared_error", false, 0, false, false},
                      LossCase{"mean_absolute_error", false, 0, false, false},
                      LossCase{"huber", false, 0, false, false}),
    [](const ::testing::TestParamInfo<LossCase>& info) {
      return info.param.name + (info.param.from_logits ? "_logits" : "_probs") +
             std::to_string(info.index);
    });

TEST(Losses, ASeededBackwardScalesTheGradient) {
  Parameter p;
  p.value = Tensor::FromVector({1, 2}, {0.f, 0.f});
  auto loss = Make("sparse_categorical_crossentropy", true);
  Backward(loss->Compute(Use(p), Tensor::FromInts({1}, {0})), Tensor::Scalar(2.f));
  EXPECT_NEAR(p.grad.ToVector()[0], 2 * (0.5 - 1), 1e-6);
  EXPECT_NEAR(p.grad.ToVector()[1], 2 * 0.5, 1e-6);
}

TEST(Losses, RecordNothingForConstantPredictions) {
  auto loss = Make("mse");
  EXPECT_FALSE(loss->Compute(Var(Tensor::Zeros({2})), Tensor::Zeros({2})).requires_grad());
}

TEST(LossFromJson, AcceptsNamesAliasesAndClassConfigs) {
  struct Case {
    std::string json, name;
    bool from_logits;
  } cases[] = {
      {R"("sparse_categorical_crossentropy")", "sparse_categorical_crossentropy", false},
      {R"("SparseCategoricalCrossentropy")", "sparse_categorical_crossentropy", false},
      {R"("mse")", "mean_squared_error", false},
      {R"("MAE")", "mean_absolute_error", false},
      {R"("huber_loss")", "huber", false},
      {R"({"class_name": "SparseCategoricalCrossentropy",
           "config": {"from_logits": true, "reduction": "auto",
                      "name": "sparse_categorical_crossentropy"}})",
       "sparse_categorical_crossentropy", true},
      {R"({"module": "keras.losses", "class_name": "BinaryCrossentropy",
           "config": {"from_logits": false, "label_smoothing": 0.0, "axis": -1,
                      "reduction": "sum_over_batch_size", "name": "bce"},
           "registered_name": null})",
       "binary_crossentropy", false},
  };
  for (const Case& c : cases) {
    auto o = LossOptionsFromJson(c.json, "model.json: loss");
    ASSERT_TRUE(o.ok()) << c.json << ": " << o.status().message();
    EXPECT_EQ(o->name, c.name) << c.json;
    EXPECT_EQ(o->from_logits, c.from_logits) << c.json;
    auto loss = LossFromJson(c.json, "model.json: loss");
    ASSERT_TRUE(loss.ok());
    EXPECT_EQ((*loss)->name(), c.name);
  }
  auto huber = LossOptionsFromJson(R"({"class_name":"Huber","config":{"delta":2.5}})", "x");
  ASSERT_TRUE(huber.ok());
  EXPECT_FLOAT_EQ(huber->delta, 2.5f);
}

TEST(LossFromJson, RejectsMalformedConfigsNamingTheField) {
  struct Case {
    std::string json, expected;
  } cases[] = {
      {R"("cosine_similarity")", "model.json: loss: unknown loss \"cosine_similarity\""},
      {R"({"class_name": "Huber", "config": {"delta": "big"}})",
       "model.json: loss: config.delta: expected a number"},
      {R"({"class_name": "Huber", "config": {"delta": -1}})",
       "model.json: loss: config.delta: must be positive"},
      {R"({"class_name": "MeanSquaredError", "config": {"from_logits": true}})",
       "model.json: loss: config.from_logits: unknown field"},
      {R"({"class_name": "BinaryCrossentropy", "config": {"from_logits": 1}})",
       "model.json: loss: config.from_logits: expected true or false"},
      {R"({"class_name": "BinaryCrossentropy", "config": {"reduction": "sum"}})",
       "model.json: loss: config.reduction: only"},
      {R"({"config": {}})", "model.json: loss: class_name: expected a string"},
      {R"({"class_name": "Huber", "extra": 1})", "model.json: loss: unknown field \"extra\""},
      {R"({"class_name": "Huber", "config": [1]})", "model.json: loss: config: expected an object"},
      {R"(42)", "model.json: loss: expected a name"},
      {R"({"class_name": )", "model.json: loss: not valid JSON"},
  };
  for (const Case& c : cases) {
    auto loss = LossFromJson(c.json, "model.json: loss");
    ASSERT_FALSE(loss.ok()) << c.json;
    EXPECT_EQ(loss.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(loss.status().message().rfind(c.expected, 0), 0u)
        << "got: " << loss.status().message();
    EXPECT_EQ(loss.status().message().find('\n'), std::string::npos);
  }
}

TEST(MakeLoss, RejectsUnknownNamesAndBadOptions) {
  LossOptions o;
  o.name = "nope";
  EXPECT_FALSE(MakeLoss(o).ok());
  o.name = "categorical_crossentropy";
  o.label_smoothing = 1.5f;
  EXPECT_FALSE(MakeLoss(o).ok());
}

}  // namespace
}  // namespace edl::nn
