// The master's TensorBoard scalars (roles/job/job_events.h), read back by
// the tests' own event-file reader.
#include "roles/job/job_events.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/tensorboard/tfevents_reader.h"

namespace edl::roles::job {
namespace {

namespace fs = std::filesystem;
using testing::PointsOf;
using testing::ReadEventFiles;

master::EvaluationRecord Evaluation(int64_t version, double loss, double accuracy) {
  master::EvaluationRecord e;
  e.model_version = version;
  e.result.samples = 10000;
  e.result.loss = loss;
  e.result.metrics = {{"accuracy", accuracy}};
  return e;
}

master::Progress At(int64_t version, int64_t records, double loss_sum, int64_t samples,
                    size_t workers) {
  master::Progress p;
  p.model_version = version;
  p.records_trained = records;
  p.train_loss_sum = loss_sum;
  p.train_samples = samples;
  p.workers = workers;
  return p;
}

TEST(JobEvents, WritesWindowMeansAndOnlyTheEvaluationsItHasNotSeen) {
  const fs::path dir = fs::temp_directory_path() / ("edl_job_events_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // A master that took over a job whose first evaluation was written by
  // its predecessor.
  std::vector<master::EvaluationRecord> evaluations = {Evaluation(100, 0.9, 0.7)};
  auto events = JobEvents::Open(dir.string(), nullptr, At(100, 6400, 64, 640, 2),
                                evaluations.size(), /*now=*/10.0);
  ASSERT_TRUE(events.ok()) << events.status().message();
  EXPECT_FALSE((*events)->Due(10.5));
  EXPECT_TRUE((*events)->Due(11.0));
  evaluations.push_back(Evaluation(200, 0.5, 0.8));
  // 1,280 samples with a loss sum of 640 since the start: mean 0.5; 12,800
  // records in 2 s.
  (*events)->Update(At(300, 19200, 704, 1920, 2), evaluations, {}, 12.0);
  (*events)->Update(At(400, 25600, 736, 2560, 1), evaluations, {}, 13.0);

  auto files = ReadEventFiles(dir.string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].error, "");
  auto loss = PointsOf(files, "train/loss");
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_EQ(loss[0].step, 300);
  EXPECT_FLOAT_EQ(loss[0].value, 0.5f);
  EXPECT_EQ(loss[1].step, 400);
  EXPECT_FLOAT_EQ(loss[1].value, 0.05f);  // 32 / 640
  auto rate = PointsOf(files, "train/samples_per_second");
  ASSERT_EQ(rate.size(), 2u);
  EXPECT_FLOAT_EQ(rate[0].value, 6400.0f);
  EXPECT_FLOAT_EQ(rate[1].value, 6400.0f);
  auto workers = PointsOf(files, "job/workers");
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_FLOAT_EQ(workers[1].value, 1.0f);
  EXPECT_TRUE(PointsOf(files, "train/learning_rate").empty());  // no optimizer given
  auto accuracy = PointsOf(files, "validation/accuracy");
  ASSERT_EQ(accuracy.size(), 1u);  // not the predecessor's
  EXPECT_EQ(accuracy[0].step, 200);
  EXPECT_FLOAT_EQ(accuracy[0].value, 0.8f);
  EXPECT_FLOAT_EQ(PointsOf(files, "validation/loss").at(0).value, 0.5f);
  fs::remove_all(dir);
}

TEST(JobEvents, WritesATrainingPointAtEveryEpochsEndAtTheVersionItEndedAt) {
  const fs::path dir =
      fs::temp_directory_path() / ("edl_job_events_epochs_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto events = JobEvents::Open(dir.string(), nullptr, At(0, 0, 0, 0, 2), 0, /*now=*/0.0);
  ASSERT_TRUE(events.ok()) << events.status().message();
  // 2 epochs of 60,000 records; epoch 1 ends at version 938 (at 9.5 s),
  // epoch 2 and the job at 1876 (at 19 s).
  const master::EpochEnd first{1, 9.5, At(938, 60000, 23000, 60000, 2)};
  const master::EpochEnd second{2, 19.0, At(1876, 120000, 32800, 120000, 2)};
  (*events)->Update(At(500, 32000, 16000, 32000, 2), {}, {}, 5.0);
  (*events)->Update(At(1000, 64000, 23400, 64000, 2), {}, {first}, 10.0);
  // The second end is not in this progress yet (read before it): it waits.
  (*events)->Update(At(1500, 96000, 29800, 96000, 2), {}, {first, second}, 15.0);
  // The job's end: nothing moved since the epoch's end, so one point there.
  (*events)->Update(second.progress, {}, {first, second}, 20.0);

  auto files = ReadEventFiles(dir.string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].error, "");
  std::vector<int64_t> steps;
  std::vector<float> means;
  for (const auto& p : PointsOf(files, "train/loss")) {
    steps.push_back(p.step);
    means.push_back(p.value);
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{500, 938, 1000, 1500, 1876}));
  // Each the mean over its own window: 28,000 samples with a loss sum of
  // 7,000 from version 500 to the end of epoch 1, and so on.
  EXPECT_EQ(means, (std::vector<float>{0.5f, 0.25f, 0.1f, 0.2f, 0.125f}));
  auto rate = PointsOf(files, "train/samples_per_second");
  ASSERT_EQ(rate.size(), 5u);
  EXPECT_EQ(rate[1].step, 938);
  EXPECT_FLOAT_EQ(rate[1].value, 28000.0f / 4.5f);
  EXPECT_EQ(rate[4].step, 1876);
  EXPECT_FLOAT_EQ(rate[4].value, 24000.0f / 4.0f);
  EXPECT_EQ(PointsOf(files, "job/workers").size(), 5u);
  fs::remove_all(dir);
}

TEST(JobEvents, WithoutADirectoryKeepsTheSeriesOnly) {
  auto events = JobEvents::Open("", nullptr, At(0, 0, 0, 0, 1), 0, /*now=*/0.0);
  ASSERT_TRUE(events.ok()) << events.status().message();
  std::vector<master::EvaluationRecord> evaluations = {Evaluation(50, 0.7, 0.75)};
  (*events)->Update(At(60, 3840, 192, 384, 1), evaluations, {}, 1.0);
  auto loss = (*events)->series().Points("train/loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0].step, 60);
  EXPECT_DOUBLE_EQ(loss[0].value, 0.5);
  auto accuracy = (*events)->series().Points("validation/accuracy");
  ASSERT_EQ(accuracy.size(), 1u);
  EXPECT_EQ(accuracy[0].step, 50);
  EXPECT_EQ((*events)->series().Points("job/workers").size(), 1u);
}

}  // namespace
}  // namespace edl::roles::job
