#include "roles/master/task_dispatcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace edl::roles::master {
namespace {

constexpr int64_t kLease = 1000;

DispatcherOptions Options(int64_t training, int64_t validation = 0, int64_t prediction = 0,
                          int64_t per_task = 128, int epochs = 1) {
  DispatcherOptions o;
  o.records.training = training;
  o.records.validation = validation;
  o.records.prediction = prediction;
  o.records_per_task = per_task;
  o.num_epochs = epochs;
  o.lease_timeout_nanos = kLease;
  o.seed = 42;
  return o;
}

// Hands out and completes everything; returns the tasks in handout order.
std::vector<Task> Drain(TaskDispatcher& d, int64_t worker = 1) {
  std::vector<Task> tasks;
  for (;;) {
    Task t = d.GetTask(worker, 0);
    if (t.type == TaskType::kDone || t.type == TaskType::kWait) break;
    tasks.push_back(t);
    EXPECT_TRUE(d.ReportTask(worker, t.id, TaskResult::kSucceeded).accepted);
  }
  return tasks;
}

TEST(TaskDispatcher, CutsTheDataIntoTasksWithAShorterLastOne) {
  TaskDispatcher d(Options(1000));
  EXPECT_EQ(d.tasks_in(Dataset::kTraining), 8);
  std::vector<Task> tasks = Drain(d);
  ASSERT_EQ(tasks.size(), 8u);
  std::sort(tasks.begin(), tasks.end(),
            [](const Task& a, const Task& b) { return a.begin < b.begin; });
  int64_t next = 0;
  for (const Task& t : tasks) {
    EXPECT_EQ(t.type, TaskType::kTraining);
    EXPECT_EQ(t.dataset, Dataset::kTraining);
    EXPECT_EQ(t.epoch, 1);
    EXPECT_EQ(t.begin, next);
    next = t.end;
  }
  EXPECT_EQ(tasks.back().begin, 896);
  EXPECT_EQ(tasks.back().end, 1000);
  EXPECT_TRUE(d.AllDone());
}

std::vector<std::vector<int64_t>> EpochOrders(uint64_t seed, int epochs) {
  DispatcherOptions o = Options(128 * 50, 0, 0, 128, epochs);
  o.seed = seed;
  TaskDispatcher d(o);
  std::vector<std::vector<int64_t>> orders(epochs);
  for (const Task& t : Drain(d)) orders[t.epoch - 1].push_back(t.begin);
  return orders;
}

TEST(TaskDispatcher, ShufflesEachEpochDeterministicallyFromTheSeed) {
  auto a = EpochOrders(7, 3);
  EXPECT_EQ(a, EpochOrders(7, 3));
  EXPECT_NE(a, EpochOrders(8, 3));
  for (auto& order : a) {
    ASSERT_EQ(order.size(), 50u);
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i * 128);
    EXPECT_NE(order, sorted);  // shuffled (50! orders, one sorted)
  }
  EXPECT_NE(a[0], a[1]);
  EXPECT_NE(a[1], a[2]);
  // Epoch e depends on seed + e only: seed 7's epoch 2 is seed 8's epoch 1.
  EXPECT_EQ(a[1], EpochOrders(8, 1)[0]);
}

TEST(TaskDispatcher, GivesTasksDistinctSeedsThatDependOnTheJobSeed) {
  TaskDispatcher d(Options(1000));
  std::set<uint64_t> seeds;
  for (const Task& t : Drain(d)) seeds.insert(t.seed);
  EXPECT_EQ(seeds.size(), 8u);
  DispatcherOptions o = Options(1000);
  o.seed = 43;
  TaskDispatcher other(o);
  for (const Task& t : Drain(other)) EXPECT_EQ(seeds.count(t.seed), 0u);
}

TEST(TaskDispatcher, CreatesTheNextEpochOnlyWhenTheCurrentOneIsHandedOut) {
  TaskDispatcher d(Options(256, 0, 0, 128, 2));
  EXPECT_EQ(d.Counts(TaskType::kTraining).todo, 4);
  Task a = d.GetTask(1, 0);
  EXPECT_EQ(d.current_epoch(), 1);
  Task b = d.GetTask(2, 0);
  EXPECT_EQ(a.epoch, 1);
  EXPECT_EQ(b.epoch, 1);
  EXPECT_EQ(d.current_epoch(), 1);
  // Epoch 1 is all handed out but not done: the next request opens epoch 2.
  Task c = d.GetTask(3, 0);
  EXPECT_EQ(c.epoch, 2);
  EXPECT_EQ(d.current_epoch(), 2);
  TaskCounts counts = d.Counts(TaskType::kTraining);
  EXPECT_EQ(counts.todo, 1);
  EXPECT_EQ(counts.doing, 3);
  EXPECT_EQ(counts.done, 0);
}

TEST(TaskDispatcher, ReportsEpochAndTrainingCompletion) {
  TaskDispatcher d(Options(256, 0, 0, 128, 2));
  Task a = d.GetTask(1, 0), b = d.GetTask(1, 0);
  EXPECT_FALSE(d.ReportTask(1, a.id, TaskResult::kSucceeded).epoch_completed);
  ReportOutcome o = d.ReportTask(1, b.id, TaskResult::kSucceeded);
  ASSERT_TRUE(o.epoch_completed);
  EXPECT_EQ(*o.epoch_completed, 1);
  EXPECT_FALSE(o.training_completed);
  Task c = d.GetTask(1, 0), e = d.GetTask(1, 0);
  d.ReportTask(1, c.id, TaskResult::kSucceeded);
  o = d.ReportTask(1, e.id, TaskResult::kSucceeded);
  EXPECT_EQ(*o.epoch_completed, 2);
  EXPECT_TRUE(o.training_completed);
  EXPECT_TRUE(d.TrainingDone());
}

TEST(TaskDispatcher, RedoesDoneTrainingTasksFirstWithoutCompletingTheirEpochAgain) {
  TaskDispatcher d(Options(256, 0, 0, 128, 2));
  Task a = d.GetTask(1, 0), b = d.GetTask(1, 0);
  d.ReportTask(1, a.id, TaskResult::kSucceeded);
  ASSERT_TRUE(d.ReportTask(1, b.id, TaskResult::kSucceeded).epoch_completed);
  Task c = d.GetTask(1, 0);  // epoch 2, in flight
  std::vector<int64_t> done = d.DoneTrainingTasks();
  std::sort(done.begin(), done.end());
  std::vector<int64_t> expected = {a.id, b.id};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(done, expected);
  // The leased one and an id never issued are not redone.
  EXPECT_EQ(d.Redo({a.id, c.id, b.id, 12345}), 2);
  EXPECT_EQ(d.Counts(TaskType::kTraining).done, 0);
  EXPECT_EQ(d.Counts(TaskType::kTraining).todo, 2 + 1);  // the redos, epoch 2's other task
  const Task first = d.GetTask(1, 0);
  EXPECT_EQ(first.id, a.id);  // at the front, in the given order
  ReportOutcome o = d.ReportTask(1, first.id, TaskResult::kSucceeded);
  EXPECT_TRUE(o.accepted);
  EXPECT_TRUE(o.redo);
  EXPECT_FALSE(o.epoch_completed);
  EXPECT_EQ(d.GetTask(1, 0).id, b.id);
  EXPECT_TRUE(d.ReportTask(1, b.id, TaskResult::kSucceeded).redo);
  // Epoch 2 ends as usual; training is done only when every redo is.
  EXPECT_FALSE(d.ReportTask(1, c.id, TaskResult::kSucceeded).redo);
  const Task last = d.GetTask(1, 0);
  EXPECT_EQ(d.Redo({c.id}), 1);
  o = d.ReportTask(1, last.id, TaskResult::kSucceeded);
  EXPECT_EQ(o.epoch_completed, 2);
  EXPECT_FALSE(o.training_completed);
  EXPECT_FALSE(d.TrainingDone());
  const Task redo = d.GetTask(1, 0);
  EXPECT_EQ(redo.id, c.id);
  o = d.ReportTask(1, redo.id, TaskResult::kSucceeded);
  EXPECT_TRUE(o.redo);
  EXPECT_TRUE(o.training_completed);
  EXPECT_TRUE(d.AllDone());
}

TEST(TaskDispatcher, HandsOutEvaluationTasksBeforeTraining) {
  TaskDispatcher d(Options(1000, 300));
  Task first = d.GetTask(1, 0);
  EXPECT_EQ(first.type, TaskType::kTraining);
  EXPECT_EQ(d.CreateEvaluationRound(77), 3);
  for (int i = 0; i < 3; ++i) {
    Task t = d.GetTask(1, 0);
    EXPECT_EQ(t.type, TaskType::kEvaluation);
    EXPECT_EQ(t.dataset, Dataset::kValidation);
    EXPECT_EQ(t.model_version, 77);
    EXPECT_EQ(t.begin, i * 128);
  }
  EXPECT_EQ(d.GetTask(1, 0).type, TaskType::kTraining);
  EXPECT_EQ(d.Counts(TaskType::kEvaluation).doing, 3);
}

TEST(TaskDispatcher, CreatesNoEvaluationRoundWithoutValidationData) {
  TaskDispatcher d(Options(1000));
  EXPECT_EQ(d.CreateEvaluationRound(1), 0);
  EXPECT_EQ(d.GetTask(1, 0).type, TaskType::kTraining);
}

TEST(TaskDispatcher, QueuesPredictionTasksAtOnce) {
  TaskDispatcher d(Options(0, 0, 300));
  EXPECT_EQ(d.Counts(TaskType::kPrediction).todo, 3);
  std::vector<Task> tasks = Drain(d);
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[2].type, TaskType::kPrediction);
  EXPECT_EQ(tasks[2].dataset, Dataset::kPrediction);
  EXPECT_EQ(tasks[2].begin, 256);
  EXPECT_EQ(tasks[2].end, 300);
  EXPECT_EQ(d.GetTask(1, 0).type, TaskType::kDone);
}

TEST(TaskDispatcher, AnswersWaitWhileTasksAreInFlightAndDoneAtTheEnd) {
  TaskDispatcher d(Options(200));
  Task a = d.GetTask(1, 0);
  Task b = d.GetTask(2, 0);
  EXPECT_EQ(d.GetTask(3, 0).type, TaskType::kWait);
  d.ReportTask(1, a.id, TaskResult::kSucceeded);
  EXPECT_EQ(d.GetTask(3, 0).type, TaskType::kWait);
  d.ReportTask(2, b.id, TaskResult::kSucceeded);
  EXPECT_EQ(d.GetTask(3, 0).type, TaskType::kDone);
}

TEST(TaskDispatcher, ReclaimPutsAWorkersTasksBackAtTheFront) {
  TaskDispatcher d(Options(128 * 10));
  Task a = d.GetTask(1, 0);
  Task b = d.GetTask(1, 0);
  Task c = d.GetTask(2, 0);
  ASSERT_EQ(d.LeasesOf(1).size(), 2u);
  EXPECT_EQ(d.Reclaim(1, ReclaimReason::kLost), 2);
  EXPECT_TRUE(d.LeasesOf(1).empty());
  EXPECT_EQ(d.Counts(TaskType::kTraining).doing, 1);
  EXPECT_EQ(d.GetTask(3, 0).id, a.id);
  EXPECT_EQ(d.GetTask(3, 0).id, b.id);
  EXPECT_NE(d.GetTask(3, 0).id, c.id);
  EXPECT_EQ(d.Reclaim(99, ReclaimReason::kLost), 0);
}

TEST(TaskDispatcher, ExpiresLeasesOnTick) {
  TaskDispatcher d(Options(128 * 4));
  Task a = d.GetTask(1, 100);
  Task b = d.GetTask(2, 500);
  EXPECT_EQ(d.Tick(100 + kLease - 1), 0);
  EXPECT_EQ(d.Tick(100 + kLease), 1);
  EXPECT_TRUE(d.LeasesOf(1).empty());
  ASSERT_EQ(d.LeasesOf(2).size(), 1u);
  EXPECT_EQ(d.GetTask(3, 2000).id, a.id);
  EXPECT_EQ(d.Tick(500 + kLease), 1);
  EXPECT_EQ(d.GetTask(3, 2000).id, b.id);
}

TEST(TaskDispatcher, IgnoresReportsForTasksNoLongerLeasedToTheWorker) {
  TaskDispatcher d(Options(128 * 4));
  Task a = d.GetTask(1, 0);
  d.Reclaim(1, ReclaimReason::kLost);
  ReportOutcome late = d.ReportTask(1, a.id, TaskResult::kSucceeded);
  EXPECT_FALSE(late.accepted);
  ASSERT_TRUE(late.task);  // decoded, for the ledger
  EXPECT_EQ(late.task->begin, a.begin);
  EXPECT_EQ(late.task->epoch, 1);
  EXPECT_EQ(d.Counts(TaskType::kTraining).done, 0);

  Task again = d.GetTask(2, 0);
  EXPECT_EQ(again.id, a.id);
  EXPECT_FALSE(d.ReportTask(1, a.id, TaskResult::kFailed, "x").accepted);
  EXPECT_TRUE(d.ReportTask(2, a.id, TaskResult::kSucceeded).accepted);
  EXPECT_FALSE(d.ReportTask(2, a.id, TaskResult::kSucceeded).accepted);
  EXPECT_EQ(d.Counts(TaskType::kTraining).done, 1);
  EXPECT_FALSE(d.ReportTask(2, 12345, TaskResult::kSucceeded).task);
  EXPECT_FALSE(d.ReportTask(2, -1, TaskResult::kSucceeded).task);
}

TEST(TaskDispatcher, RequeuesAFailedTaskAtTheBack) {
  TaskDispatcher d(Options(128 * 3));
  Task a = d.GetTask(1, 0);
  ReportOutcome o = d.ReportTask(1, a.id, TaskResult::kFailed, "disk");
  EXPECT_TRUE(o.accepted);
  EXPECT_FALSE(d.failed());
  EXPECT_NE(d.GetTask(1, 0).id, a.id);
  EXPECT_NE(d.GetTask(1, 0).id, a.id);
  EXPECT_EQ(d.GetTask(1, 0).id, a.id);
}

TEST(TaskDispatcher, FailsTheJobOnPoisonDataNamingTheRecords) {
  TaskDispatcher d(Options(10000, 0, 0, 512));
  int failures = 0;
  for (int i = 0; i < 100 && !d.failed(); ++i) {
    Task t = d.GetTask(1 + i % 3, 0);
    ASSERT_EQ(t.type, TaskType::kTraining);
    if (t.begin == 4096) {
      ++failures;
      d.ReportTask(1 + i % 3, t.id, TaskResult::kFailed, "bad record 4100: expected 784 values");
    } else {
      d.ReportTask(1 + i % 3, t.id, TaskResult::kSucceeded);
    }
  }
  EXPECT_EQ(failures, 3);
  EXPECT_TRUE(d.failed());
  EXPECT_EQ(d.failure(),
            "training data records [4096, 4608) failed 3 times: bad record "
            "4100: expected 784 values");
  EXPECT_EQ(d.GetTask(1, 0).type, TaskType::kDone);
}

TEST(TaskDispatcher, CountsAFailureOnlyOncePerLease) {
  DispatcherOptions o = Options(128);
  o.max_task_failures = 2;
  TaskDispatcher d(o);
  Task t = d.GetTask(1, 0);
  EXPECT_TRUE(d.ReportTask(1, t.id, TaskResult::kFailed, "e").accepted);
  EXPECT_FALSE(d.ReportTask(1, t.id, TaskResult::kFailed, "e").accepted);
  EXPECT_FALSE(d.failed());
  t = d.GetTask(1, 0);
  d.ReportTask(1, t.id, TaskResult::kFailed, "e");
  EXPECT_TRUE(d.failed());
}

TEST(TaskDispatcher, HandedBackTasksDoNotCountAsFailuresOrLosses) {
  DispatcherOptions o = Options(128);
  o.max_task_failures = 1;
  o.max_task_losses = 1;
  TaskDispatcher d(o);
  for (int i = 0; i < 5; ++i) {
    Task t = d.GetTask(1, 0);
    d.ReportTask(1, t.id, TaskResult::kHandedBack);
    t = d.GetTask(1, 0);
    d.Reclaim(1, ReclaimReason::kHandedBack);
  }
  EXPECT_FALSE(d.failed());
  EXPECT_EQ(d.Counts(TaskType::kTraining).todo, 1);
}

// Workers prefix a task's errors with its range; the failure says it once.
TEST(TaskDispatcher, NamesTheFailedRangeOnceWhenTheWorkersErrorNamesItToo) {
  DispatcherOptions o = Options(128 * 2);
  o.max_task_failures = 1;
  TaskDispatcher d(o);
  Task t = d.GetTask(1, 0);
  d.ReportTask(1, t.id, TaskResult::kFailed,
               TaskDispatcher::Describe(t) + ": record 5: expected 4 fields, got 3");
  ASSERT_TRUE(d.failed());
  EXPECT_EQ(d.failure(), "training data records [" + std::to_string(t.begin) + ", " +
                             std::to_string(t.end) +
                             ") failed once: record 5: expected 4 fields, got 3");
}

TEST(TaskDispatcher, FailsTheJobWhenATaskKeepsLosingItsWorker) {
  DispatcherOptions o = Options(128 * 4);
  o.max_task_losses = 3;
  TaskDispatcher d(o);
  Task t = d.GetTask(1, 0);
  d.Reclaim(1, ReclaimReason::kLost);
  d.GetTask(2, 0);
  d.Reclaim(2, ReclaimReason::kLost);
  EXPECT_FALSE(d.failed());
  d.GetTask(3, 0);
  d.Tick(kLease);
  EXPECT_TRUE(d.failed());
  EXPECT_EQ(d.failure(), TaskDispatcher::Describe(t) +
                             " were lost 3 times (its lease expired); do these "
                             "records crash or hang the worker?");
}

TEST(TaskDispatcher, NeverFailsOnLossesWhenUnlimited) {
  DispatcherOptions o = Options(128);
  o.max_task_losses = 0;
  TaskDispatcher d(o);
  for (int i = 0; i < 50; ++i) {
    d.GetTask(i + 1, 0);
    d.Reclaim(i + 1, ReclaimReason::kLost);
  }
  EXPECT_FALSE(d.failed());
}

TEST(TaskDispatcher, DispatchesManyTasksToManyWorkers) {
  // 200k tasks over 1000 workers, each holding one lease at a time.
  TaskDispatcher d(Options(200000, 0, 0, 1));
  std::vector<int64_t> held(1000, 0);
  int64_t done = 0;
  for (int64_t round = 0; done < 200000; ++round) {
    for (int w = 0; w < 1000; ++w) {
      if (held[w] != 0) {
        ASSERT_TRUE(d.ReportTask(w + 1, held[w], TaskResult::kSucceeded).accepted);
        ++done;
        held[w] = 0;
      }
      Task t = d.GetTask(w + 1, round);
      if (t.type == TaskType::kTraining) held[w] = t.id;
    }
  }
  EXPECT_TRUE(d.AllDone());
  EXPECT_EQ(d.Counts(TaskType::kTraining).done, 200000);
}

}  // namespace
}  // namespace edl::roles::master
