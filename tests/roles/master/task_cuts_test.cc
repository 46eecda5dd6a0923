// TaskCuts: a data set of several files is cut file by file, so no task
// spans two files; one file is cut as before.
#include "roles/master/task_cuts.h"

#include <gtest/gtest.h>

#include "roles/master/data_ledger.h"
#include "roles/master/task_dispatcher.h"

namespace edl::roles::master {
namespace {

TEST(TaskCuts, OneFileIsCutIntoRunsWithAShorterLastOne) {
  TaskCuts cuts(1000, {}, 128);
  EXPECT_EQ(cuts.num_tasks(), 8);
  EXPECT_EQ(cuts.Range(0), std::make_pair(int64_t{0}, int64_t{128}));
  EXPECT_EQ(cuts.Range(7), std::make_pair(int64_t{896}, int64_t{1000}));
  EXPECT_EQ(cuts.TaskOf(895), 6);
  EXPECT_EQ(cuts.TaskOf(896), 7);
}

TEST(TaskCuts, NoTaskSpansTwoFilesAndEmptyFilesHoldNone) {
  TaskCuts cuts(300, {100, 0, 150, 50}, 64);
  // 100 -> 64 + 36; 150 -> 64 + 64 + 22; 50 -> 50.
  ASSERT_EQ(cuts.num_tasks(), 6);
  const std::pair<int64_t, int64_t> want[] = {{0, 64},    {64, 100},  {100, 164},
                                              {164, 228}, {228, 250}, {250, 300}};
  for (int64_t t = 0; t < 6; ++t) {
    EXPECT_EQ(cuts.Range(t), want[t]) << "task " << t;
    EXPECT_EQ(cuts.TaskOf(want[t].first), t);
    EXPECT_EQ(cuts.TaskOf(want[t].second - 1), t);
  }
}

TEST(TaskCuts, TheDispatcherAndTheLedgerCutFilesTheSameWay) {
  DispatcherOptions o;
  o.records.training = 300;
  o.records.training_files = {100, 0, 150, 50};
  o.records_per_task = 64;
  o.seed = 3;
  TaskDispatcher d(o);
  DataLedger ledger(TaskCuts(300, o.records.training_files, 64), 1);
  int tasks = 0;
  for (;;) {
    Task t = d.GetTask(1, 0);
    if (t.type != TaskType::kTraining) break;
    ++tasks;
    const int64_t file_end = t.begin < 100 ? 100 : t.begin < 250 ? 250 : 300;
    EXPECT_LE(t.end, file_end) << "[" << t.begin << ", " << t.end << ") crosses a file end";
    ledger.RecordTrained(t.epoch, t.begin, t.end);  // dies unless it is one of the ledger's tasks
    EXPECT_TRUE(d.ReportTask(1, t.id, TaskResult::kSucceeded).accepted);
  }
  EXPECT_EQ(tasks, 6);
  EXPECT_EQ(ledger.Summary(/*job_ended=*/true)[0].trained, 300);
  EXPECT_EQ(ledger.Summary(/*job_ended=*/true)[0].missing, 0);
  EXPECT_EQ(ledger.Summary(/*job_ended=*/true)[0].trained_more_than_once, 0);
}

}  // namespace
}  // namespace edl::roles::master
