// A master that survives its own death (docs/distributed.md), on the core:
// a new MasterCore on the old one's state directory continues the job
// (epoch, queues, leases, ledger, evaluation round, ring), workers keep
// their ids and report the tasks they held, a worker that never comes back
// loses its leases, retried calls act once, and another job's or a corrupt
// state is refused with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <vector>

#include "roles/master/master_core.h"
#include "tests/roles/master/simulated_worker.h"

namespace edl::roles::master {
namespace {

namespace fs = std::filesystem;
using testing::BinaryMetrics;
using testing::SimulatedWorker;

class MasterRecoveryTest : public ::testing::Test {
 protected:
  MasterRecoveryTest()
      : dir_((fs::temp_directory_path() /
              ("edl-master-state-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                 .string()) {
    fs::remove_all(dir_);
  }
  ~MasterRecoveryTest() override { fs::remove_all(dir_); }

  MasterOptions Options(int64_t training, int epochs = 1) const {
    MasterOptions o;
    o.job_name = "recover";
    o.records.training = training;
    o.minibatch_size = 16;
    o.num_minibatches_per_task = 4;  // 64 records per task
    o.num_epochs = epochs;
    o.evaluation_steps = -1;
    o.seed = 7;
    o.state_dir = dir_;
    o.durable_state = false;  // the same files, without waiting for the disk
    return o;
  }
  std::unique_ptr<MasterCore> Start(const MasterOptions& o) {
    auto core = MasterCore::Create(o, clock_);
    EXPECT_TRUE(core.ok()) << core.status().message();
    return core.ok() ? std::move(*core) : nullptr;
  }
  static void ExpectEveryRecordTrainedOnce(const MasterCore& core) {
    for (const EpochLedger& e : core.ledger()) {
      EXPECT_EQ(e.trained, e.records) << "epoch " << e.epoch;
      EXPECT_EQ(e.missing, 0) << "epoch " << e.epoch;
      EXPECT_EQ(e.trained_more_than_once, 0) << "epoch " << e.epoch;
    }
  }

  std::string dir_;
  FakeClock clock_;
};

TEST_F(MasterRecoveryTest, ANewMasterContinuesTheJobAndAHeldTaskIsReportedToIt) {
  const MasterOptions o = Options(2000, /*epochs=*/2);
  std::atomic<int64_t> version{0};
  auto core = Start(o);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  for (int i = 0; i < 20; ++i) {
    a.Step(version);
    b.Step(version);
  }
  const Task held = a.Take();  // a is training this when the master dies
  ASSERT_EQ(held.type, TaskType::kTraining);
  const int64_t version_before = core->model_version();
  core.reset();

  core = Start(o);
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->restarts(), 1);
  EXPECT_EQ(core->model_version(), version_before);
  a.Reattach(*core);
  b.Reattach(*core);
  // b is not handed a's task: it is still leased to a.
  for (int i = 0; i < 3; ++i) {
    const Task t = b.Take();
    EXPECT_NE(t.id, held.id);
    b.Complete(t, version);
  }
  a.Complete(held, version);
  for (int guard = 0; core->state() == JobState::kRunning && guard < 1000; ++guard) {
    a.Step(version);
    b.Step(version);
  }
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  ExpectEveryRecordTrainedOnce(*core);
}

// A PS came back holding only some of the done tasks: the others are
// trained again (once, counted as redone), also across a master restart,
// and a task whose every minibatch the PS took is not.
TEST_F(MasterRecoveryTest, TasksARestoredPsLacksAreRedoneOnceAlsoAcrossARestart) {
  const MasterOptions o = Options(2000, /*epochs=*/2);  // 32 tasks an epoch, 4 minibatches each
  std::atomic<int64_t> version{0};
  auto core = Start(o);
  SimulatedWorker a(*core, "worker-0");
  std::vector<Task> done;
  for (int i = 0; i < 10; ++i) {
    const Task t = a.Take();
    ASSERT_EQ(t.type, TaskType::kTraining);
    a.Complete(t, version);
    done.push_back(t);
  }
  std::vector<int64_t> ids;
  for (const Task& t : done) ids.push_back(t.id);
  std::sort(ids.begin(), ids.end());
  // The PS holds ids[0..2] settled, ids[3] whole but unsettled, ids[4] in part.
  const std::vector<std::pair<int64_t, int64_t>> settled = {{ids[0], ids[2]}};
  const std::vector<std::pair<int64_t, int64_t>> taken = {{ids[3], 4}, {ids[4], 3}};
  EXPECT_EQ(core->RedoLostTasks("ps-1", settled, taken), 6);
  int64_t redone_records = 0;
  for (const Task& t : done) {
    if (t.id != ids[0] && t.id != ids[1] && t.id != ids[2] && t.id != ids[3]) {
      redone_records += t.end - t.begin;
    }
  }
  core.reset();  // the redos are journaled

  core = Start(o);
  ASSERT_NE(core, nullptr);
  a.Reattach(*core);
  for (int guard = 0; core->state() == JobState::kRunning && guard < 1000; ++guard) a.Step(version);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  ExpectEveryRecordTrainedOnce(*core);
  int64_t redone = 0;
  for (const EpochLedger& e : core->ledger()) redone += e.redone;
  EXPECT_EQ(redone, redone_records);
  EXPECT_EQ(core->RedoLostTasks("ps-1", {}, {}), 0) << "the job has ended";
}

// While a PS is being checked the job cannot end: a worker out of tasks
// waits instead of leaving.
TEST_F(MasterRecoveryTest, AHeldEndKeepsTheJobRunningUntilReleased) {
  MasterOptions o = Options(128);
  o.state_dir.clear();
  std::atomic<int64_t> version{0};
  auto core = Start(o);
  core->HoldEnd("ps-0", true);
  SimulatedWorker a(*core, "worker-0");
  EXPECT_EQ(a.Step(version), TaskType::kTraining);
  EXPECT_EQ(a.Step(version), TaskType::kTraining);
  EXPECT_EQ(a.Step(version), TaskType::kWait);
  EXPECT_EQ(core->state(), JobState::kRunning);
  core->HoldEnd("ps-0", false);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  EXPECT_EQ(a.Step(version), TaskType::kDone);
}

TEST_F(MasterRecoveryTest, MastersKilledAtRandomMomentsLoseNoRecordAndTrainNoneTwice) {
  MasterOptions o = Options(3000, /*epochs=*/3);
  o.snapshot_min_bytes = 600;  // snapshots now and then, replay in between
  std::mt19937 rng(42);
  std::atomic<int64_t> version{0};
  auto core = Start(o);
  std::vector<std::unique_ptr<SimulatedWorker>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(std::make_unique<SimulatedWorker>(*core, "worker-" + std::to_string(i)));
  }
  std::vector<Task> held(workers.size());
  int deaths = 0;
  for (int step = 0; core->state() == JobState::kRunning && step < 5000; ++step) {
    const size_t i = rng() % workers.size();
    SimulatedWorker& w = *workers[i];
    if (held[i].type == TaskType::kTraining) {
      w.Complete(held[i], version);
      held[i] = Task{};
    } else {
      held[i] = w.Take();
    }
    if (rng() % 25 == 0) {  // the master dies; every worker keeps its task
      core.reset();
      core = Start(o);
      ASSERT_NE(core, nullptr);
      for (auto& each : workers) each->Reattach(*core);
      ++deaths;
    }
  }
  EXPECT_GE(deaths, 5);
  EXPECT_EQ(core->restarts(), deaths);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  ExpectEveryRecordTrainedOnce(*core);
}

TEST_F(MasterRecoveryTest, LeasesOfAWorkerThatNeverComesBackGoBackAfterItsHeartbeatTimeout) {
  MasterOptions o = Options(640);
  o.heartbeat_timeout_s = 2;
  std::atomic<int64_t> version{0};
  auto core = Start(o);
  SimulatedWorker gone(*core, "worker-0"), stays(*core, "worker-1");
  const Task lost = gone.Take();
  core.reset();
  core = Start(o);
  stays.Reattach(*core);
  clock_.AdvanceSeconds(1.5);
  stays.Heartbeat();
  core->Tick();
  EXPECT_EQ(core->workers().size(), 2u);  // within the timeout, both still count
  clock_.AdvanceSeconds(1.0);
  stays.Heartbeat();
  core->Tick();
  ASSERT_EQ(core->workers().size(), 1u);
  bool got_lost_task = false;
  for (int guard = 0; core->state() == JobState::kRunning && guard < 100; ++guard) {
    const Task t = stays.Take();
    got_lost_task = got_lost_task || t.id == lost.id;
    if (t.type == TaskType::kTraining) stays.Complete(t, version);
  }
  EXPECT_TRUE(got_lost_task);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  ExpectEveryRecordTrainedOnce(*core);
}

TEST_F(MasterRecoveryTest, ARetriedGetTaskGetsTheSameTaskAndARetriedReportCountsOnce) {
  auto core = Start(Options(640));
  auto id = core->RegisterWorker({"worker-0", 1});
  ASSERT_TRUE(id.ok());
  const int64_t worker = id->worker_id;
  auto first = core->GetTask({worker, 1});
  auto retry = core->GetTask({worker, 1});
  ASSERT_TRUE(first.ok() && retry.ok());
  EXPECT_EQ(first->id, retry->id);
  auto next = core->GetTask({worker, 2});
  EXPECT_NE(next->id, first->id);
  protocol::ReportTaskRequest report;
  report.worker_id = worker;
  report.task_id = first->id;
  report.model_version = 1;
  ASSERT_TRUE(core->ReportTask(report).ok());
  ASSERT_TRUE(core->ReportTask(report).ok());  // its reply was lost
  core.reset();
  core = Start(Options(640));
  ASSERT_TRUE(core->ReportTask(report).ok());  // and again, to the new master
  const EpochLedger e = core->ledger().at(0);
  EXPECT_EQ(e.trained, 64);
  EXPECT_EQ(e.trained_more_than_once, 0);
}

TEST_F(MasterRecoveryTest, ARetriedReportOfAWorkerDeclaredDeadMeanwhileCountsOnce) {
  MasterOptions o = Options(640);
  o.heartbeat_timeout_s = 2;
  auto core = Start(o);
  auto id = core->RegisterWorker({"worker-0", 1});
  ASSERT_TRUE(id.ok());
  auto task = core->GetTask({id->worker_id, 1});
  ASSERT_TRUE(task.ok());
  protocol::ReportTaskRequest report;
  report.worker_id = id->worker_id;
  report.task_id = task->id;
  ASSERT_TRUE(core->ReportTask(report).ok());  // applied; its reply was lost
  clock_.AdvanceSeconds(3);
  core->Tick();  // the worker, silent, is declared dead
  ASSERT_TRUE(core->workers().empty());
  core.reset();
  core = Start(o);                             // and the master restarts
  ASSERT_TRUE(core->ReportTask(report).ok());  // the retry
  EXPECT_EQ(core->ledger().at(0).trained, 64);
  EXPECT_EQ(core->ledger().at(0).trained_more_than_once, 0);
}

TEST_F(MasterRecoveryTest, TheTrainingsDurationSurvivesARestart) {
  std::atomic<int64_t> version{0};
  auto core = Start(Options(640));
  SimulatedWorker w(*core, "worker-0");
  w.Step(version);
  clock_.AdvanceSeconds(5);
  core.reset();
  core = Start(Options(640));
  w.Reattach(*core);
  clock_.AdvanceSeconds(1);
  while (w.Step(version) != TaskType::kDone) {
  }
  // Measured by the wall clock across the restart: a rate is reported.
  EXPECT_NE(core->FinalReport().find("training: 640 records in "), std::string::npos)
      << core->FinalReport();
}

TEST_F(MasterRecoveryTest, AnEvaluationRoundInFlightIsFinishedByTheNewMaster) {
  MasterOptions o = Options(640);
  o.records.validation = 640;
  o.make_metrics = BinaryMetrics();
  std::atomic<int64_t> version{0};
  auto core = Start(o);
  SimulatedWorker w(*core, "worker-0");
  // Training, then half of the final evaluation round.
  int evaluated = 0;
  while (evaluated < 5) {
    const Task t = w.Take();
    ASSERT_NE(t.type, TaskType::kDone);
    w.Complete(t, version);
    evaluated += t.type == TaskType::kEvaluation;
  }
  core.reset();
  core = Start(o);
  w.Reattach(*core);
  for (int guard = 0; core->state() == JobState::kRunning && guard < 100; ++guard) w.Step(version);
  ASSERT_EQ(core->state(), JobState::kSucceeded);
  const auto history = core->evaluation_history();
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].result.samples, 640);
  // The metrics over all 640 records, half merged before the restart.
  const auto expected = testing::MetricsOver(0, 640);
  ASSERT_EQ(history[0].result.metrics.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(history[0].result.metrics[i].second, expected[i]->Result(), 1e-9);
  }
}

TEST_F(MasterRecoveryTest, PredictionsAfterARestartAreStillCheckedAgainstTheFirstOnesShape) {
  MasterOptions o = Options(0);
  o.records.prediction = 640;
  std::atomic<int64_t> version{0};
  auto core = Start(o);
  SimulatedWorker w(*core, "worker-0");
  ASSERT_EQ(w.Step(version), TaskType::kPrediction);  // one column
  core.reset();
  core = Start(o);
  w.Reattach(*core);
  const Task t = w.Take();
  ASSERT_EQ(t.type, TaskType::kPrediction);
  protocol::ReportTaskRequest r;
  r.worker_id = w.id();
  r.task_id = t.id;
  r.predictions = tensor::Tensor::Zeros({t.end - t.begin, 2});  // two columns
  ASSERT_TRUE(core->ReportTask(r).ok());
  EXPECT_EQ(core->state(), JobState::kFailed);
  EXPECT_NE(core->failure_reason().find("do not match the others'"), std::string::npos)
      << core->failure_reason();
}

TEST_F(MasterRecoveryTest, TheRingAndItsVersionSurviveARestart) {
  auto core = Start(Options(640));
  auto a = core->RegisterWorker({"worker-0", 1});
  auto b = core->RegisterWorker({"worker-1", 2});
  ASSERT_TRUE(core->JoinRing({a->worker_id, "127.0.0.1:1000"}).ok());
  auto view = core->JoinRing({b->worker_id, "127.0.0.1:1001"});
  ASSERT_TRUE(view.ok());
  core.reset();
  core = Start(Options(640));
  auto again = core->GetRingView({a->worker_id, 0});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->version, view->version);
  ASSERT_EQ(again->members.size(), 2u);
  EXPECT_EQ(again->members[1].address, "127.0.0.1:1001");
}

TEST_F(MasterRecoveryTest, AFinishedJobStaysFinished) {
  std::atomic<int64_t> version{0};
  auto core = Start(Options(128));
  SimulatedWorker w(*core, "worker-0");
  while (w.Step(version) != TaskType::kDone) {
  }
  ASSERT_EQ(core->state(), JobState::kSucceeded);
  core.reset();
  core = Start(Options(128));
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  core->FailEnding("export failed");
  core.reset();
  core = Start(Options(128));
  EXPECT_EQ(core->state(), JobState::kFailed);
  EXPECT_EQ(core->failure_reason(), "export failed");
}

TEST_F(MasterRecoveryTest, TheStateOfAnotherJobIsRefusedNamingWhatDiffers) {
  MasterOptions o = Options(640, /*epochs=*/2);
  Start(o).reset();
  o.num_epochs = 3;
  auto other = MasterCore::Create(o, clock_);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("holds the state of another job (epochs 2 there, "
                                          "epochs 3 here)"),
            std::string::npos)
      << other.status().message();
}

TEST_F(MasterRecoveryTest, ACorruptJournalIsRefusedNamingFileAndOffset) {
  std::atomic<int64_t> version{0};
  {
    auto core = Start(Options(640));
    SimulatedWorker w(*core, "worker-0");
    for (int i = 0; i < 4; ++i) w.Step(version);
  }
  // Flip a byte inside the journal's second record.
  std::string journal;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename().string().rfind("journal-", 0) == 0) journal = e.path().string();
  }
  ASSERT_FALSE(journal.empty());
  {
    std::fstream f(journal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    f.put('\x7f');
  }
  auto core = MasterCore::Create(Options(640), clock_);
  ASSERT_FALSE(core.ok());
  EXPECT_NE(core.status().message().find(journal + ": record"), std::string::npos)
      << core.status().message();
  EXPECT_NE(core.status().message().find("offset"), std::string::npos);
}

}  // namespace
}  // namespace edl::roles::master
