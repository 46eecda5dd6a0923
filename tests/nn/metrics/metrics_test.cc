// Metrics on small known cases, AUC against the exact area, and merging of
// partial states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/metrics/accuracy.h"
#include "nn/metrics/confusion_metrics.h"
#include "nn/metrics/mean_metric.h"

namespace edl::nn::metrics {
namespace {

using tensor::Tensor;

TEST(SparseCategoricalAccuracy, CountsArgmaxHitsForIntAndFloatLabels) {
  const Tensor pred = Tensor::FromVector(
      {4, 3}, {0.1f, 0.7f, 0.2f, 0.5f, 0.5f, 0.0f, 0.2f, 0.3f, 0.5f, 1.f, 0.f, 0.f});
  SparseCategoricalAccuracy ints;
  ints.Update(Tensor::FromInts({4}, {1, 1, 2, 2}), pred);  // tie -> index 0
  EXPECT_DOUBLE_EQ(ints.Result(), 0.5);
  SparseCategoricalAccuracy floats;
  floats.Update(Tensor::FromVector({4, 1}, {1.f, 0.f, 2.f, 0.f}), pred);
  EXPECT_DOUBLE_EQ(floats.Result(), 1.0);
  EXPECT_EQ(floats.State(), (std::vector<double>{4, 4}));
}

TEST(CategoricalAccuracy, ComparesArgmaxOfLabelsAndPredictions) {
  CategoricalAccuracy m;
  m.Update(Tensor::FromVector({3, 2}, {1, 0, 0, 1, 0, 1}),
           Tensor::FromVector({3, 2}, {0.9f, 0.1f, 0.6f, 0.4f, 0.2f, 0.8f}));
  EXPECT_NEAR(m.Result(), 2.0 / 3.0, 1e-12);
}

TEST(BinaryAccuracy, ThresholdsAtOneHalfStrictly) {
  BinaryAccuracy m;
  m.Update(Tensor::FromVector({4, 1}, {1, 0, 1, 0}),
           Tensor::FromVector({4, 1}, {0.9f, 0.5f, 0.5f, 0.1f}));
  EXPECT_DOUBLE_EQ(m.Result(), 0.75);  // 0.5 is not > 0.5
  BinaryAccuracy high("binary_accuracy", 0.95);
  high.Update(Tensor::FromVector({1}, {1}), Tensor::FromVector({1}, {0.9f}));
  EXPECT_DOUBLE_EQ(high.Result(), 0.0);
}

TEST(BinaryAccuracy, AveragesOverTheLastAxisPerSample) {
  BinaryAccuracy m;
  m.Update(Tensor::FromVector({2, 2}, {1, 1, 0, 0}),
           Tensor::FromVector({2, 2}, {0.9f, 0.1f, 0.1f, 0.2f}));
  EXPECT_EQ(m.State(), (std::vector<double>{1.5, 2}));
}

TEST(MeanMetrics, MseMaeAndMeanMatchHandComputedValues) {
  MeanSquaredError mse;
  MeanAbsoluteError mae;
  const Tensor t = Tensor::FromVector({2, 2}, {1, 2, 3, 4});
  const Tensor p = Tensor::FromVector({2, 2}, {1, 0, 0, 4});
  mse.Update(t, p);
  mae.Update(t, p);
  EXPECT_DOUBLE_EQ(mse.Result(), (0 + 4 + 9 + 0) / 4.0);
  EXPECT_DOUBLE_EQ(mae.Result(), (0 + 2 + 3 + 0) / 4.0);
  Mean loss("loss");
  loss.Update(Tensor(), Tensor::Scalar(2.f));
  loss.Add(4.0);
  EXPECT_DOUBLE_EQ(loss.Result(), 3.0);
  EXPECT_EQ(loss.name(), "loss");
  Mean empty;
  EXPECT_EQ(empty.Result(), 0.0);
}

TEST(PrecisionRecall, CountAtOneHalf) {
  const Tensor t = Tensor::FromVector({6}, {1, 1, 1, 0, 0, 0});
  const Tensor p = Tensor::FromVector({6}, {0.9f, 0.6f, 0.2f, 0.7f, 0.1f, 0.5f});
  Precision precision;
  Recall recall;
  precision.Update(t, p);
  recall.Update(t, p);
  EXPECT_DOUBLE_EQ(precision.Result(), 2.0 / 3.0);  // tp 2, fp 1
  EXPECT_DOUBLE_EQ(recall.Result(), 2.0 / 3.0);     // tp 2, fn 1
  Precision none;
  none.Update(t, Tensor::Zeros({6}));
  EXPECT_EQ(none.Result(), 0.0);
}

// Deterministic pseudo-random numbers in [0, 1).
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  double Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) / 9007199254740992.0;
  }

 private:
  uint64_t state_;
};

// The exact ROC AUC: P(score of a positive > score of a negative), ties 1/2.
double ExactAuc(const std::vector<float>& labels, const std::vector<float>& scores) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == 0) continue;
    for (size_t j = 0; j < labels.size(); ++j) {
      if (labels[j] != 0) continue;
      pairs += 1;
      wins += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
    }
  }
  return wins / pairs;
}

struct Sample {
  std::vector<float> labels, scores;
};

// Positives score higher on average (overlapping distributions).
Sample Overlapping(int n, uint64_t seed) {
  Lcg rng(seed);
  Sample s;
  for (int i = 0; i < n; ++i) {
    const bool positive = rng.Next() < 0.4;
    const double u = rng.Next();
    s.labels.push_back(positive ? 1.f : 0.f);
    s.scores.push_back(static_cast<float>(positive ? std::sqrt(u) : u * u));
  }
  return s;
}

TEST(Auc, UsesKerasThresholds) {
  Auc auc;
  const std::vector<float>& th = auc.thresholds();
  ASSERT_EQ(th.size(), 200u);
  EXPECT_FLOAT_EQ(th[0], -1e-7f);
  EXPECT_FLOAT_EQ(th[1], 1.f / 199.f);
  EXPECT_FLOAT_EQ(th[198], 198.f / 199.f);
  EXPECT_FLOAT_EQ(th[199], 1.f + 1e-7f);
}

TEST(Auc, PerfectlySeparatedScoresGiveOne) {
  Auc auc;
  auc.Update(Tensor::FromVector({6}, {0, 0, 0, 1, 1, 1}),
             Tensor::FromVector({6}, {0.f, 0.1f, 0.3f, 0.7f, 0.9f, 1.f}));
  EXPECT_NEAR(auc.Result(), 1.0, 1e-12);
  Auc reversed;
  reversed.Update(Tensor::FromVector({4}, {1, 1, 0, 0}),
                  Tensor::FromVector({4}, {0.1f, 0.2f, 0.8f, 0.9f}));
  EXPECT_NEAR(reversed.Result(), 0.0, 1e-12);
}

TEST(Auc, UninformativeScoresGiveAboutOneHalf) {
  Lcg rng(7);
  std::vector<float> labels, scores;
  for (int i = 0; i < 20000; ++i) {
    labels.push_back(rng.Next() < 0.5 ? 1.f : 0.f);
    scores.push_back(static_cast<float>(rng.Next()));
  }
  Auc auc;
  auc.Update(Tensor::FromVector({20000}, labels), Tensor::FromVector({20000}, scores));
  EXPECT_NEAR(auc.Result(), 0.5, 0.02);
  Auc constant;
  constant.Update(Tensor::FromVector({20000}, labels), Tensor::Full({20000}, 0.5f));
  EXPECT_NEAR(constant.Result(), 0.5, 1e-12);
}

TEST(Auc, MatchesTheExactAreaWithin1e3) {
  const Sample s = Overlapping(3000, 42);
  Auc auc;
  const int64_t n = static_cast<int64_t>(s.labels.size());
  auc.Update(Tensor::FromVector({n}, s.labels), Tensor::FromVector({n}, s.scores));
  const double exact = ExactAuc(s.labels, s.scores);
  EXPECT_GT(exact, 0.7);
  EXPECT_LT(exact, 0.95);
  EXPECT_NEAR(auc.Result(), exact, 1e-3);
}

TEST(Auc, FromLogitsAppliesTheSigmoid) {
  Auc probabilities, logits("auc", 200, /*from_logits=*/true);
  const Tensor t = Tensor::FromVector({4}, {0, 1, 0, 1});
  const std::vector<float> z = {-2.f, 0.5f, 1.f, 3.f};
  std::vector<float> p;
  for (float v : z) p.push_back(1.f / (1.f + std::exp(-v)));
  probabilities.Update(t, Tensor::FromVector({4}, p));
  logits.Update(t, Tensor::FromVector({4}, z));
  EXPECT_DOUBLE_EQ(probabilities.Result(), logits.Result());
}

// Updating the whole equals merging the states of two halves.
void ExpectHalvesMergeToWhole(Metric& whole, Metric& first, Metric& second, const Tensor& t,
                              const Tensor& p) {
  const int64_t n = t.dim(0);
  whole.Update(t, p);
  first.Update(t.Slice(0, n / 2), p.Slice(0, n / 2));
  second.Update(t.Slice(n / 2, n), p.Slice(n / 2, n));
  ASSERT_TRUE(first.Merge(second.State()).ok());
  // Counts agree exactly; sums of errors up to rounding.
  const std::vector<double> merged = first.State();
  const std::vector<double> expected = whole.State();
  ASSERT_EQ(merged.size(), expected.size()) << whole.name();
  for (size_t i = 0; i < merged.size(); ++i) {
    EXPECT_NEAR(merged[i], expected[i], 1e-9 * std::max(1.0, expected[i]))
        << whole.name() << " state " << i;
  }
  EXPECT_NEAR(first.Result(), whole.Result(), 1e-12) << whole.name();
}

TEST(MetricMerge, TwoHalvesMergeToTheWholeForEveryMetric) {
  const Sample s = Overlapping(1001, 3);
  const int64_t n = static_cast<int64_t>(s.labels.size());
  const Tensor t = Tensor::FromVector({n, 1}, s.labels);
  const Tensor p = Tensor::FromVector({n, 1}, s.scores);
  {
    Auc a, b, c;
    ExpectHalvesMergeToWhole(a, b, c, t, p);
  }
  {
    Precision a, b, c;
    ExpectHalvesMergeToWhole(a, b, c, t, p);
  }
  {
    Recall a, b, c;
    ExpectHalvesMergeToWhole(a, b, c, t, p);
  }
  {
    BinaryAccuracy a, b, c;
    ExpectHalvesMergeToWhole(a, b, c, t, p);
  }
  {
    MeanSquaredError a, b, c;
    ExpectHalvesMergeToWhole(a, b, c, t, p);
  }
  {
    std::vector<float> scores3;
    std::vector<int64_t> ids;
    Lcg rng(5);
    for (int64_t i = 0; i < n; ++i) {
      for (int k = 0; k < 3; ++k) scores3.push_back(static_cast<float>(rng.Next()));
      ids.push_back(static_cast<int64_t>(rng.Next() * 3));
    }
    SparseCategoricalAccuracy a, b, c;
    ExpectHalvesMergeToWhole(a, b, c, Tensor::FromInts({n}, ids),
                             Tensor::FromVector({n, 3}, scores3));
  }
}

TEST(MetricMerge, RejectsAStateOfTheWrongLength) {
  Auc auc;
  Status s = auc.Merge({1, 2, 3});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "metric \"auc\": cannot merge a state of 3 values into one of 800");
  Mean mean;
  EXPECT_FALSE(mean.Merge({1}).ok());
  EXPECT_EQ(mean.State(), (std::vector<double>{0, 0}));
}

TEST(MetricReset, ClearsStateAndCloneKeepsIt) {
  Auc auc;
  auc.Update(Tensor::FromVector({2}, {0, 1}), Tensor::FromVector({2}, {0.2f, 0.8f}));
  std::unique_ptr<Metric> copy = auc.Clone();
  auc.Reset();
  EXPECT_EQ(auc.Result(), 0.0);
  EXPECT_NEAR(copy->Result(), 1.0, 1e-12);
  EXPECT_EQ(copy->name(), "auc");
}

}  // namespace
}  // namespace edl::nn::metrics
