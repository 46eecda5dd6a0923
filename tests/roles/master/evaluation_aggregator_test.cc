#include "roles/master/evaluation_aggregator.h"

#include <gtest/gtest.h>

#include <random>

#include "nn/metrics/metrics_from_json.h"

namespace edl::roles::master {
namespace {

using nn::metrics::Metric;
using tensor::Tensor;

MetricsFactory BinaryMetrics() {
  return [] {
    return nn::metrics::MetricsFromJson(R"(["accuracy", "auc"])", "binary_crossentropy", "test");
  };
}

// Starts the due round, if any, with `tasks` tasks; returns its version.
std::optional<int64_t> Start(EvaluationAggregator& a, int64_t tasks = 1) {
  std::optional<EvaluationAggregator::DueRound> due = a.TakeRoundToStart();
  if (!due) return std::nullopt;
  EXPECT_TRUE(a.StartRound(due->version, due->epoch, tasks).ok());
  return due->version;
}

std::optional<EvaluationRecord> Finish(EvaluationAggregator& a) {
  protocol::ReportTaskRequest r;
  r.loss_sum = 1;
  r.samples = 1;
  auto rec = a.AddReport(r);
  EXPECT_TRUE(rec.ok()) << rec.status().message();
  return rec.ok() ? rec.value() : std::nullopt;
}

TEST(EvaluationAggregator, StartsARoundEveryEvaluationStepsVersions) {
  EvaluationAggregator a(100, true, nullptr);
  a.OnModelVersion(50, 1);
  EXPECT_FALSE(Start(a));
  a.OnModelVersion(104, 1);
  EXPECT_EQ(Start(a), 104);
  EXPECT_TRUE(a.in_flight());
  // Passed while the round is in flight: skipped, not queued.
  a.OnModelVersion(230, 1);
  EXPECT_FALSE(Start(a));
  auto rec = Finish(a);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->model_version, 104);
  EXPECT_FALSE(rec->final);
  a.OnModelVersion(290, 1);
  EXPECT_FALSE(Start(a));
  a.OnModelVersion(300, 1);
  EXPECT_EQ(Start(a), 300);
  Finish(a);
  EXPECT_EQ(a.history().size(), 2u);
  EXPECT_FALSE(a.busy());
}

TEST(EvaluationAggregator, EvaluatesAfterEveryEpochWhenStepsIsZero) {
  EvaluationAggregator a(0, true, nullptr);
  a.OnModelVersion(1000, 1);
  EXPECT_FALSE(Start(a));
  a.OnEpochEnd(1, 40);
  EXPECT_EQ(Start(a), 40);
  Finish(a);
  a.OnEpochEnd(2, 80);
  EXPECT_EQ(Start(a), 80);
}

TEST(EvaluationAggregator, LabelsARoundWithTheEpochWhoseEndOrProgressStartedIt) {
  EvaluationAggregator by_epoch(0, true, nullptr);
  by_epoch.OnEpochEnd(1, 40);
  auto due = by_epoch.TakeRoundToStart();
  ASSERT_TRUE(due);
  EXPECT_EQ(due->version, 40);
  EXPECT_EQ(due->epoch, 1);
  ASSERT_TRUE(by_epoch.StartRound(due->version, due->epoch, 1).ok());
  by_epoch.OnEpochEnd(2, 80);  // due while the round of epoch 1 is in flight
  by_epoch.OnTrainingEnd(80, 2);
  std::optional<EvaluationRecord> rec = Finish(by_epoch);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->epoch, 1);
  due = by_epoch.TakeRoundToStart();
  ASSERT_TRUE(due);
  EXPECT_EQ(due->epoch, 2);

  EvaluationAggregator by_steps(100, true, nullptr);
  by_steps.OnModelVersion(104, 3);  // a report of an epoch 3 task
  due = by_steps.TakeRoundToStart();
  ASSERT_TRUE(due);
  EXPECT_EQ(due->version, 104);
  EXPECT_EQ(due->epoch, 3);
}

TEST(EvaluationAggregator, RunsAFinalRoundAfterTheOneInFlight) {
  EvaluationAggregator a(100, true, nullptr);
  a.OnModelVersion(100, 1);
  EXPECT_EQ(Start(a), 100);
  a.OnTrainingEnd(170, 1);
  EXPECT_TRUE(a.busy());
  EXPECT_FALSE(Start(a));  // one at a time
  ASSERT_TRUE(Finish(a));
  EXPECT_EQ(Start(a), 170);
  auto rec = Finish(a);
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->final);
  EXPECT_EQ(rec->model_version, 170);
  a.OnModelVersion(1000, 1);  // training is over
  EXPECT_FALSE(a.busy());
}

TEST(EvaluationAggregator, SkipsTheFinalRoundWhenTheLastWasAtThatVersion) {
  EvaluationAggregator a(100, true, nullptr);
  a.OnModelVersion(200, 1);
  Start(a);
  Finish(a);
  a.OnTrainingEnd(200, 1);
  EXPECT_FALSE(a.busy());
  ASSERT_EQ(a.history().size(), 1u);
  EXPECT_TRUE(a.history()[0].final);
}

TEST(EvaluationAggregator, NeverEvaluatesWithoutValidationData) {
  EvaluationAggregator a(1, false, nullptr);
  a.OnModelVersion(5, 1);
  a.OnEpochEnd(1, 5);
  a.OnTrainingEnd(5, 1);
  EXPECT_FALSE(a.busy());
}

TEST(EvaluationAggregator, MergedMetricsEqualTheMetricsOverAllData) {
  const int n = 1000, per_task = 128;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> y_true(n), y_pred(n);
  for (int i = 0; i < n; ++i) {
    y_true[i] = u(rng) < 0.4f ? 1.0f : 0.0f;
    y_pred[i] = 0.6f * y_true[i] + 0.4f * u(rng);
  }
  auto whole = BinaryMetrics()().value();
  for (auto& m : whole) {
    m->Update(Tensor::FromVector({n, 1}, y_true), Tensor::FromVector({n, 1}, y_pred));
  }

  EvaluationAggregator a(-1, true, BinaryMetrics());
  a.OnTrainingEnd(7, 1);
  const int tasks = (n + per_task - 1) / per_task;
  ASSERT_EQ(Start(a, tasks), 7);
  double loss_sum = 0;
  std::optional<EvaluationRecord> rec;
  for (int t = tasks - 1; t >= 0; --t) {  // any order
    const int b = t * per_task, e = std::min(n, b + per_task);
    std::vector<float> yt(y_true.begin() + b, y_true.begin() + e);
    std::vector<float> yp(y_pred.begin() + b, y_pred.begin() + e);
    auto part = BinaryMetrics()().value();
    protocol::ReportTaskRequest r;
    for (auto& m : part) {
      m->Update(Tensor::FromVector({e - b, 1}, yt), Tensor::FromVector({e - b, 1}, yp));
      r.metrics.push_back({m->name(), m->State()});
    }
    r.loss_sum = 0.5 * (e - b) + t;
    loss_sum += r.loss_sum;
    r.samples = e - b;
    auto added = a.AddReport(r);
    ASSERT_TRUE(added.ok()) << added.status().message();
    EXPECT_EQ(added.value().has_value(), t == 0);
    if (t == 0) rec = added.value();
  }
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->final);
  EXPECT_EQ(rec->result.samples, n);
  EXPECT_DOUBLE_EQ(rec->result.loss, loss_sum / n);
  ASSERT_EQ(rec->result.metrics.size(), 2u);
  EXPECT_EQ(rec->result.metrics[0].first, whole[0]->name());
  EXPECT_NEAR(rec->result.metrics[0].second, whole[0]->Result(), 1e-12);
  EXPECT_EQ(rec->result.metrics[1].first, "auc");
  EXPECT_NEAR(rec->result.metrics[1].second, whole[1]->Result(), 1e-12);
  EXPECT_GT(rec->result.metrics[1].second, 0.8);
  EXPECT_EQ(rec->ToString().rfind("evaluation at version 7: loss ", 0), 0u);
}

TEST(EvaluationAggregator, RejectsAReportWithAMetricItDoesNotKnow) {
  EvaluationAggregator a(-1, true, BinaryMetrics());
  a.OnTrainingEnd(1, 1);
  Start(a, 2);
  protocol::ReportTaskRequest r;
  r.task_id = 9;
  r.metrics.push_back({"accuracy", {1, 2}});
  r.metrics.push_back({"f1", {1}});
  auto added = a.AddReport(r);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.status().message(),
            "evaluation report of task 9 has metric \"f1\" that the master does "
            "not know (known: accuracy, auc)");
  r.metrics.pop_back();
  r.metrics[0].state = {1, 2, 3};
  added = a.AddReport(r);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.status().message(),
            "evaluation report of task 9: metric \"accuracy\" has a "
            "state of 3 numbers, expected 2");
}

TEST(EvaluationAggregator, ReportsTheFactorysError) {
  EvaluationAggregator a(-1, true, [] {
    return Result<std::vector<std::unique_ptr<Metric>>>(
        InvalidArgument("metrics[0]: unknown metric \"f1\""));
  });
  a.OnTrainingEnd(3, 1);
  auto due = a.TakeRoundToStart();
  ASSERT_TRUE(due);
  Status s = a.StartRound(due->version, due->epoch, 1);
  EXPECT_EQ(s.message(), "evaluation at version 3: metrics[0]: unknown metric \"f1\"");
}

}  // namespace
}  // namespace edl::roles::master
