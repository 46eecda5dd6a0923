// Effectively-once updates (roles/ps/applied_pushes.h), judged by the model's
// own weights rather than by the master's ledger: a one-column Embedding over
// the record id, initialised to zeros and trained by SGD with learning rate =
// the minibatch size on a mean absolute error against a label far above it,
// gains exactly 1.0 in a record's row each time that record's gradient is
// applied. After E epochs every row must hold E. The rows are read from the
// TF.js export (model.json's manifest and weights.bin) by this test's own
// code, not by edl's loader. Workers and the master are SIGKILLed, and a
// worker is hung (SIGSTOP) past its heartbeats, while workers hold training
// tasks half pushed; the master also while it writes its snapshot.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/testing/counting_job.h"
#include "tests/testing/job_report.h"
#include "tests/testing/master_kill.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

constexpr int kRecords = kCountingRecords;
constexpr int kEpochs = 4;

std::vector<std::string> CountingJob(const TempDir& dir, const std::string& name,
                                     std::vector<std::string> extra, int epochs = kEpochs) {
  return CountingJobArgs(dir, name, dir.File("train.csv"), epochs, /*num_ps=*/2, extra);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const char kResumed[] = "PS had this minibatch already";

TEST(AppliedOnce, WorkersKilledMidTaskLeaveEveryRecordAppliedOncePerEpoch) {
  TempDir dir;
  WriteCountingJob(dir);
  EdlProcess job(CountingJob(dir, "workers", {}));
  // Kill workers holding half-pushed tasks until a replacement has resumed
  // a task after minibatches the PS already had (a task just leased has
  // none pushed), at most four times.
  int kills = 0;
  for (; kills < 4 && Count(job.Err(), kResumed) == 0; ++kills) {
    int victim = -1;
    ASSERT_TRUE(WaitFor(
        [&] {
          victim = StopAWorkerHoldingATrainingTask(dir.path(), "workers");
          return victim > 0;
        },
        60))
        << job.Err();
    ASSERT_EQ(::kill(victim, SIGKILL), 0);
    // The replacement, or the other worker, takes the task up.
    ASSERT_TRUE(WaitFor(
        [&] {
          return Count(job.Err(), kResumed) > 0 ||
                 Count(job.Err(), "killed by signal 9; relaunching") > kills;
        },
        60))
        << job.Err();
    WaitFor([&] { return Count(job.Err(), kResumed) > 0; }, 5);
  }
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(Count(r.err, kResumed), 1) << "no kill landed mid-task in " << kills << " tries\n"
                                       << r.err;
  const std::map<float, int> rows = RowHistogram(dir.File("out"));
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
}

TEST(AppliedOnce, AHungWorkerThatWakesAfterItsTasksMovedOnLeavesEveryRecordAppliedOnce) {
  TempDir dir;
  WriteCountingJob(dir);
  // Long enough that the job is still running when the worker wakes.
  constexpr int kLongEpochs = 10;
  EdlProcess job(CountingJob(dir, "hang", {}, kLongEpochs));
  int victim = -1;
  ASSERT_TRUE(WaitFor(
      [&] {
        victim = StopAWorkerHoldingATrainingTask(dir.path(), "hang");
        return victim > 0;
      },
      60))
      << job.Err();
  // Stopped until the master declares it dead and puts its tasks back, and
  // another worker has resumed one of them; then it wakes with its push and
  // its tasks in hand.
  ASSERT_TRUE(WaitFor([&] { return Count(job.Err(), "declared dead") > 0; }, 60)) << job.Err();
  WaitFor([&] { return Count(job.Err(), kResumed) > 0; }, 10);
  ASSERT_EQ(::kill(victim, SIGCONT), 0) << "the job ended before the worker woke\n" << job.Err();
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::map<float, int> rows = RowHistogram(dir.File("out"));
  EXPECT_EQ(rows, (std::map<float, int>{{float{kLongEpochs}, kRecords}})) << Describe(rows);
}

TEST(AppliedOnce, AMasterKilledWhileWorkersPushLeavesEveryRecordAppliedOncePerEpoch) {
  TempDir dir;
  WriteCountingJob(dir);
  EdlProcess job(CountingJob(dir, "master", {}));
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "master")) >= 300; }, 60))
      << job.Err();
  KillMaster(dir.path(), "master", job);
  // And a worker, while the new master holds the job.
  int victim = -1;
  ASSERT_TRUE(WaitFor(
      [&] {
        victim = StopAWorkerHoldingATrainingTask(dir.path(), "master");
        return victim > 0;
      },
      60))
      << job.Err();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("master replaced 1 time"), std::string::npos) << r.out;
  const std::map<float, int> rows = RowHistogram(dir.File("out"));
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
}

// The snapshot temporary files in the master's state directory `dir`
// (AtomicFileWriter's "snapshot.tmp.PID.TAG.N").
int HalfWrittenSnapshots(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    n += e.path().filename().string().rfind("snapshot.tmp.", 0) == 0;
  }
  return n;
}

// The master SIGKILLed while it writes its snapshot, by construction rather
// than by luck: the journal's test hook (EDL_TEST_SNAPSHOT_STALL_FILE,
// roles/master/journal.cc) makes it snapshot early, and holds its second
// snapshot half written until the kill. The new master recovers from the
// first snapshot and the journal after it, and removes the half-written one.
TEST(AppliedOnce, AMasterKilledWhileWritingItsSnapshotRecoversFromTheLastOne) {
  TempDir dir;
  WriteCountingJob(dir);
  const std::string stalled = dir.File("snapshot-stalled");
  const std::string state = dir.File("snapshot/master");
  EdlProcess job(CountingJob(dir, "snapshot", {}), {{"EDL_TEST_SNAPSHOT_STALL_FILE", stalled}});
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(stalled); }, 60)) << job.Err();
  EXPECT_TRUE(std::filesystem::exists(state + "/snapshot")) << "no earlier snapshot";
  EXPECT_EQ(HalfWrittenSnapshots(state), 1);
  const int pid = MasterPid(dir.path(), "snapshot");
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  WaitForNewMaster(dir.path(), "snapshot", pid, /*restarts_before=*/0, job);
  EXPECT_EQ(HalfWrittenSnapshots(state), 0);
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(restart 1): a snapshot and "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("master replaced 1 time"), std::string::npos) << r.out;
  const std::map<float, int> rows = RowHistogram(dir.File("out"));
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
}

}  // namespace
}  // namespace edl::testing

namespace edl::testing {
namespace {

// SIGKILLs the job's PS 1 once the model is past `version` (gtest
// failures, naming the job's log, otherwise).
void KillPs1Past(const TempDir& dir, const std::string& name, int64_t version, EdlProcess& job) {
  std::vector<int> ps;
  ASSERT_TRUE(WaitFor(
      [&] {
        if (Version(JobStatus(dir.path(), name)) < version) return false;
        ps = FindPids({" ps ", "--job_name=" + name, "--ps_index=1"});
        return ps.size() == 1;
      },
      60))
      << job.Err();
  ASSERT_EQ(::kill(ps[0], SIGKILL), 0);
}

// A PS that checkpoints every version has every push it answered in a
// checkpoint; killed, it restarts from it knowing which named pushes its
// weights hold (without that it would take the tasks in flight again from
// their first minibatch), and the push it had not answered is retried:
// every record is still applied once per epoch.
TEST(AppliedOnce, APsKilledMidJobRestoresWhatItTookAndTakesTheRestOnce) {
  constexpr int kSmall = 8192;  // a checkpoint per version: a small job
  TempDir dir;
  WriteCountingJob(dir, kSmall);
  EdlProcess job(CountingJob(
      dir, "pskill",
      {"--checkpoint_dir=" + dir.File("ckpt"), "--checkpoint_steps=1", "--keep_checkpoint_max=2"}));
  KillPs1Past(dir, "pskill", 150, job);
  if (::testing::Test::HasFatalFailure()) return;
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ps-1 (incarnation 1) killed by signal 9; relaunching"), std::string::npos)
      << r.err;
  const std::map<float, int> rows = RowHistogram(dir.File("out"), kSmall);
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kSmall}})) << Describe(rows);
}

// With a checkpoint every 2000 versions (~60 tasks), a PS killed mid-job comes back
// without the updates of the tasks finished since its last checkpoint: the
// master learns which (the PS's named pushes) and trains them again for it
// alone (the other PS refuse their pushes as taken), so every record is
// still applied once per epoch, and the ledger counts them as redone.
TEST(AppliedOnce, APsKilledLongAfterItsLastCheckpointHasTheTasksItLostRedoneForItAlone) {
  TempDir dir;
  WriteCountingJob(dir);
  EdlProcess job(CountingJob(dir, "redo",
                             {"--checkpoint_dir=" + dir.File("ckpt"), "--checkpoint_steps=2000",
                              "--keep_checkpoint_max=2"}));
  // Past a checkpoint (version 2000) by tasks that it lacks.
  KillPs1Past(dir, "redo", 2600, job);
  if (::testing::Test::HasFatalFailure()) return;
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ps-1 came back without the updates of"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("redone for a restored PS"), std::string::npos) << r.out;
  EXPECT_EQ(Count(r.out, "0 trained twice or more"), kEpochs) << r.out;
  const std::map<float, int> rows = RowHistogram(dir.File("out"));
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
}

}  // namespace
}  // namespace edl::testing
