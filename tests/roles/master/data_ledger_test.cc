#include "roles/master/data_ledger.h"

#include <gtest/gtest.h>

namespace edl::roles::master {
namespace {

TEST(DataLedger, StartsWithEveryRecordPending) {
  DataLedger ledger(TaskCuts(1000, {}, 128), 2);
  auto s = ledger.Summary(/*job_ended=*/false);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].epoch, 2);
  EXPECT_EQ(s[1].records, 1000);
  EXPECT_EQ(s[1].pending, 1000);
  EXPECT_EQ(s[1].missing, 0);
  EXPECT_EQ(s[1].trained, 0);
  EXPECT_EQ(ledger.records_trained_total(), 0);
}

TEST(DataLedger, CallsUntrainedRecordsPendingWhileTheJobRunsAndMissingOnceItEnded) {
  DataLedger ledger(TaskCuts(1000, {}, 128), 2);
  ledger.RecordTrained(1, 0, 128);
  ledger.RecordTrained(1, 896, 1000);
  const EpochLedger running = ledger.Summary(/*job_ended=*/false)[0];
  EXPECT_EQ(running.trained, 232);
  EXPECT_EQ(running.pending, 1000 - 232);
  EXPECT_EQ(running.missing, 0);
  const EpochLedger ended = ledger.Summary(/*job_ended=*/true)[0];
  EXPECT_EQ(ended.trained, 232);
  EXPECT_EQ(ended.pending, 0);
  EXPECT_EQ(ended.missing, 1000 - 232);
  EXPECT_EQ(ledger.Summary(/*job_ended=*/true)[1].missing, 1000);
}

TEST(DataLedger, CountsEachTaskRangeAndRepeats) {
  DataLedger ledger(TaskCuts(1000, {}, 128), 1);
  ledger.RecordTrained(1, 0, 128);
  ledger.RecordTrained(1, 896, 1000);  // the short last task
  ledger.RecordTrained(1, 896, 1000);
  ledger.RecordTrained(1, 896, 1000);
  EXPECT_EQ(ledger.TimesTrained(1, 0), 1);
  EXPECT_EQ(ledger.TimesTrained(1, 127), 1);
  EXPECT_EQ(ledger.TimesTrained(1, 128), 0);
  EXPECT_EQ(ledger.TimesTrained(1, 999), 3);
  EpochLedger s = ledger.Summary(/*job_ended=*/false)[0];
  EXPECT_EQ(s.trained, 128 + 104);
  EXPECT_EQ(s.pending, 1000 - 232);
  EXPECT_EQ(s.trained_more_than_once, 104);
  EXPECT_EQ(s.record_trainings, 128 + 3 * 104);
  EXPECT_EQ(ledger.records_trained_total(), 128 + 3 * 104);
}

TEST(DataLedger, PrintsOneLinePerEpoch) {
  DataLedger ledger(TaskCuts(256, {}, 128), 2);
  ledger.RecordTrained(1, 0, 128);
  ledger.RecordTrained(1, 128, 256);
  ledger.RecordTrained(1, 128, 256);
  ledger.RecordTrained(2, 0, 128);
  EXPECT_EQ(ledger.ToString(/*job_ended=*/false),
            "epoch 1: 256/256 records trained, 0 pending, 128 trained twice or more\n"
            "epoch 2: 128/256 records trained, 128 pending, 0 trained twice or "
            "more\n");
  EXPECT_EQ(ledger.ToString(/*job_ended=*/true),
            "epoch 1: 256/256 records trained, 0 missing, 128 trained twice or more\n"
            "epoch 2: 128/256 records trained, 128 missing, 0 trained twice or "
            "more\n");
}

TEST(DataLedger, WritesJson) {
  DataLedger ledger(TaskCuts(256, {}, 128), 1);
  ledger.RecordTrained(1, 0, 128);
  EXPECT_EQ(ledger.ToJson(/*job_ended=*/false),
            R"([{"epoch":1,"missing":0,"pending":128,"record_trainings":128,"records":256,)"
            R"("redone":0,"trained":128,"trained_more_than_once":0}])");
  EXPECT_EQ(ledger.ToJson(/*job_ended=*/true),
            R"([{"epoch":1,"missing":128,"pending":0,"record_trainings":128,"records":256,)"
            R"("redone":0,"trained":128,"trained_more_than_once":0}])");
}

TEST(DataLedger, CountsTasksRedoneForARestoredPsApartFromTheTrainings) {
  DataLedger ledger(TaskCuts(256, {}, 128), 2);
  ledger.RecordTrained(1, 0, 128);
  ledger.RecordTrained(1, 128, 256);
  ledger.RecordRedone(1, 128, 256);
  const EpochLedger e = ledger.Summary(/*job_ended=*/true)[0];
  EXPECT_EQ(e.trained, 256);
  EXPECT_EQ(e.trained_more_than_once, 0);
  EXPECT_EQ(e.record_trainings, 256);
  EXPECT_EQ(e.redone, 128);
  EXPECT_EQ(ledger.ToString(/*job_ended=*/true),
            "epoch 1: 256/256 records trained, 0 missing, 0 trained twice or more, 128 redone "
            "for a restored PS\n"
            "epoch 2: 0/256 records trained, 256 missing, 0 trained twice or more\n");
}

TEST(DataLedgerDeathTest, RejectsARangeThatIsNotATask) {
  DataLedger ledger(TaskCuts(256, {}, 128), 1);
  EXPECT_DEATH(ledger.RecordTrained(1, 0, 100), "not a task");
  EXPECT_DEATH(ledger.RecordTrained(2, 0, 128), "epoch 2");
}

}  // namespace
}  // namespace edl::roles::master
