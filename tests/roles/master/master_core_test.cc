#include "roles/master/master_core.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "tests/roles/master/simulated_worker.h"

namespace edl::roles::master {
namespace {

using testing::BinaryMetrics;
using testing::MetricsOver;
using testing::SimulatedWorker;

MasterOptions Options(int64_t training, int64_t validation = 0, int64_t prediction = 0) {
  MasterOptions o;
  o.job_name = "test";
  o.records.training = training;
  o.records.validation = validation;
  o.records.prediction = prediction;
  o.minibatch_size = 16;
  o.num_minibatches_per_task = 4;  // 64 records per task
  o.num_epochs = 1;
  o.evaluation_steps = -1;
  o.seed = 1;
  return o;
}

std::unique_ptr<MasterCore> Make(const MasterOptions& o, const Clock& clock) {
  auto core = MasterCore::Create(o, clock);
  EXPECT_TRUE(core.ok()) << core.status().message();
  return std::move(core).value();
}

// Runs the workers round-robin until none gets work; returns the steps.
int RunToEnd(std::vector<SimulatedWorker*> workers, std::atomic<int64_t>& version) {
  int steps = 0;
  for (bool busy = true; busy && steps < 100000;) {
    busy = false;
    for (SimulatedWorker* w : workers) {
      TaskType t = w->Step(version);
      if (t != TaskType::kDone) busy = true;
      ++steps;
    }
  }
  return steps;
}

TEST(MasterCore, RejectsBadOptionsNamingTheField) {
  FakeClock clock;
  MasterOptions o = Options(100);
  o.minibatch_size = 0;
  EXPECT_EQ(MasterCore::Create(o, clock).status().message(),
            "master: minibatch_size must be > 0, got 0");
  o = Options(0);
  EXPECT_EQ(MasterCore::Create(o, clock).status().message(),
            "master: the job has no data (training, validation and prediction "
            "data are all empty)");
  o = Options(100);
  o.num_epochs = 0;
  EXPECT_EQ(MasterCore::Create(o, clock).status().message(),
            "master: num_epochs must be >= 1, got 0");
  o = Options(100);
  o.heartbeat_timeout_s = 0;
  EXPECT_EQ(MasterCore::Create(o, clock).status().message(),
            "master: heartbeat_timeout_s must be > 0, got 0.000000");
}

TEST(MasterCore, TrainsEveryRecordOfEveryEpochExactlyOnceWithoutFailures) {
  FakeClock clock;
  MasterOptions o = Options(1000);
  o.num_epochs = 3;
  auto core = Make(o, clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1"), c(*core, "worker-2");
  std::atomic<int64_t> version{0};
  RunToEnd({&a, &b, &c}, version);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  EXPECT_TRUE(core->WaitUntilFinished(std::chrono::milliseconds(0)));
  EXPECT_EQ(version, 3 * 16);  // 16 tasks of 64 records per epoch
  EXPECT_EQ(core->model_version(), 3 * 16);
  auto ledger = core->ledger();
  ASSERT_EQ(ledger.size(), 3u);
  for (const EpochLedger& e : ledger) {
    EXPECT_EQ(e.trained, 1000);
    EXPECT_EQ(e.missing, 0);
    EXPECT_EQ(e.trained_more_than_once, 0);
  }
  EXPECT_TRUE(a.Heartbeat());  // stop: the job is over
}

TEST(MasterCore, AnswersWaitWhileOthersWorkAndDoneAtTheEnd) {
  FakeClock clock;
  auto core = Make(Options(64), clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  protocol::Task t = a.Take();
  EXPECT_EQ(t.type, TaskType::kTraining);
  EXPECT_EQ(b.Take().type, TaskType::kWait);
  a.Complete(t, version);
  EXPECT_EQ(b.Take().type, TaskType::kDone);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
}

TEST(MasterCore, RefusesWorkerIdsItNeverIssued) {
  FakeClock clock;
  auto core = Make(Options(64), clock);
  auto t = core->GetTask({42});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(t.status().message(), "worker id 42 was never registered with this master");
  EXPECT_FALSE(core->Heartbeat({42}).ok());
  EXPECT_FALSE(core->ReportTask({}).ok());
  EXPECT_FALSE(core->RegisterWorker({"", 1}).ok());
}

TEST(MasterCore, DeclaresASilentWorkerDeadWithinTwoSecondsAndReassignsItsTask) {
  FakeClock clock;
  auto core = Make(Options(640), clock);
  SimulatedWorker silent(*core, "worker-0"), alive(*core, "worker-1");
  protocol::Task lost = silent.Take();
  double waited = 0;
  while (core->workers().size() == 2 && waited < 10) {
    clock.AdvanceSeconds(0.1);
    waited += 0.1;
    alive.Heartbeat();
    core->Tick();
  }
  EXPECT_LE(waited, 2.1 + 1e-9);
  EXPECT_GE(waited, 2.0 - 1e-9);
  ASSERT_EQ(core->workers().size(), 1u);
  EXPECT_EQ(core->workers()[0].name, "worker-1");
  // The lost task goes to the front of the queue.
  EXPECT_EQ(alive.Take().id, lost.id);
  // The dead incarnation is told to leave.
  EXPECT_TRUE(silent.Heartbeat());
  EXPECT_EQ(silent.Take().type, TaskType::kDone);
}

TEST(MasterCore, ReclaimsAnExitedWorkersTasksAtOnce) {
  FakeClock clock;
  auto core = Make(Options(640), clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  protocol::Task t = a.Take();
  core->OnWorkerExit("worker-0");
  core->OnWorkerExit("worker-7");  // unknown: nothing happens
  EXPECT_EQ(b.Take().id, t.id);
  EXPECT_EQ(core->workers().size(), 1u);
}

TEST(MasterCore, ARelaunchedWorkerReplacesItsOldIncarnation) {
  FakeClock clock;
  auto core = Make(Options(640), clock);
  SimulatedWorker old_one(*core, "worker-0");
  protocol::Task t = old_one.Take();
  SimulatedWorker new_one(*core, "worker-0");
  EXPECT_NE(new_one.id(), old_one.id());
  EXPECT_EQ(new_one.Take().id, t.id);
  EXPECT_EQ(old_one.Take().type, TaskType::kDone);
}

TEST(MasterCore, ExpiresALeaseThatRunsTooLong) {
  FakeClock clock;
  MasterOptions o = Options(640);
  o.lease_timeout_s = 30;
  auto core = Make(o, clock);
  SimulatedWorker slow(*core, "worker-0"), other(*core, "worker-1");
  protocol::Task t = slow.Take();
  for (int i = 0; i < 31; ++i) {
    clock.AdvanceSeconds(1);
    slow.Heartbeat();
    other.Heartbeat();
    core->Tick();
  }
  EXPECT_EQ(other.Take().id, t.id);
}

TEST(MasterCore, KeepsEveryRecordAndBoundsRetrainingWhenWorkersDie) {
  FakeClock clock;
  MasterOptions o = Options(6400);  // 100 tasks per epoch
  o.num_epochs = 2;
  o.lease_timeout_s = 20;
  auto core = Make(o, clock);
  std::atomic<int64_t> version{0};
  std::vector<std::unique_ptr<SimulatedWorker>> workers;
  for (int i = 0; i < 4; ++i) {
    workers.push_back(std::make_unique<SimulatedWorker>(*core, "worker-" + std::to_string(i)));
  }
  auto tick = [&](double s) {
    clock.AdvanceSeconds(s);
    for (auto& w : workers) w->Heartbeat();
    core->Tick();
  };
  int lost_in_flight = 0;
  // Every worker holds one task at a time; at some steps one dies holding
  // its task (killed: never reports), at one step one's lease expires and
  // it reports late (a zombie: its records get trained twice).
  std::vector<protocol::Task> held(workers.size());
  protocol::Task zombie_task;
  size_t zombie = 99;
  int relaunches = 0;
  for (int step = 0; step < 2000 && core->state() == JobState::kRunning; ++step) {
    const size_t i = step % workers.size();
    SimulatedWorker& w = *workers[i];
    if (held[i].id != 0) {
      w.Complete(held[i], version);
      held[i] = {};
    }
    if (step == 37 || step == 150 || step == 201) {
      // Killed mid-task: takes a task, dies, the cluster relaunches it.
      protocol::Task t = w.Take();
      ASSERT_EQ(t.type, TaskType::kTraining);
      ++lost_in_flight;
      core->OnWorkerExit(w.name());
      workers[i] = std::make_unique<SimulatedWorker>(*core, w.name());
      ++relaunches;
      continue;
    }
    if (step == 90) {
      zombie_task = w.Take();
      zombie = i;
      // Every lease expires (the zombie's and the others'), the workers keep
      // heartbeating and report late: all these tasks are trained twice.
      lost_in_flight +=
          1 + static_cast<int>(std::count_if(held.begin(), held.end(),
                                             [](const protocol::Task& t) { return t.id != 0; }));
      tick(21);
      continue;
    }
    if (i == zombie && step == 94) {
      w.Complete(zombie_task, version);  // late: ignored, but trained
      zombie = 99;
    }
    protocol::Task t = w.Take();
    if (t.type == TaskType::kTraining) held[i] = t;
  }
  EXPECT_EQ(core->state(), JobState::kSucceeded) << core->failure_reason();
  EXPECT_EQ(relaunches, 3);
  int64_t retrained = 0;
  for (const EpochLedger& e : core->ledger()) {
    EXPECT_EQ(e.missing, 0) << "epoch " << e.epoch;
    EXPECT_EQ(e.trained, 6400);
    retrained += e.trained_more_than_once;
  }
  EXPECT_EQ(lost_in_flight, 3 + 4);
  EXPECT_EQ(retrained, 4 * 64);  // the late reports
  EXPECT_LE(retrained, lost_in_flight * 64);
}

TEST(MasterCore, FailsTheJobOnPoisonDataWithTheRecordRange) {
  FakeClock clock;
  MasterOptions o = Options(640);
  o.minibatch_size = 32;
  o.num_minibatches_per_task = 4;  // 128 per task
  auto core = Make(o, clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  for (int i = 0; i < 100 && core->state() == JobState::kRunning; ++i) {
    SimulatedWorker& w = i % 2 ? a : b;
    protocol::Task t = w.Take();
    if (t.type != TaskType::kTraining) continue;
    if (t.begin == 256) {
      w.Fail(t, "record 300: expected 784 values, got 12");
    } else {
      w.Complete(t, version);
    }
  }
  EXPECT_EQ(core->state(), JobState::kFailed);
  EXPECT_EQ(core->failure_reason(),
            "training data records [256, 384) failed 3 times: record 300: "
            "expected 784 values, got 12");
  EXPECT_TRUE(core->WaitUntilFinished(std::chrono::milliseconds(0)));
  EXPECT_EQ(a.Take().type, TaskType::kDone);
  EXPECT_TRUE(a.Heartbeat());
  EXPECT_NE(core->FinalReport().find("job test failed: training data records [256, 384)"),
            std::string::npos);
}

TEST(MasterCore, EvaluatesAtTheRightVersionsWithMetricsOverAllValidationData) {
  FakeClock clock;
  MasterOptions o = Options(1280, 1000);  // 20 training tasks per epoch
  o.num_epochs = 2;
  o.evaluation_steps = 10;
  o.make_metrics = BinaryMetrics();
  auto core = Make(o, clock);
  SimulatedWorker w(*core, "worker-0");
  std::atomic<int64_t> version{0};
  RunToEnd({&w}, version);
  ASSERT_EQ(core->state(), JobState::kSucceeded) << core->failure_reason();
  auto history = core->evaluation_history();
  ASSERT_EQ(history.size(), 4u);
  auto whole = MetricsOver(0, 1000);
  double loss = 0;
  for (int i = 0; i < 1000; ++i) loss += testing::RecordLoss(i);
  for (size_t r = 0; r < history.size(); ++r) {
    EXPECT_EQ(history[r].model_version, 10 * static_cast<int64_t>(r + 1));
    EXPECT_EQ(history[r].final, r == 3);
    EXPECT_EQ(history[r].result.samples, 1000);
    EXPECT_NEAR(history[r].result.loss, loss / 1000, 1e-12);
    ASSERT_EQ(history[r].result.metrics.size(), 2u);
    EXPECT_NEAR(history[r].result.metrics[0].second, whole[0]->Result(), 1e-12);
    EXPECT_NEAR(history[r].result.metrics[1].second, whole[1]->Result(), 1e-12);
  }
  EXPECT_EQ(history[1].epoch, 1);
  EXPECT_EQ(history[2].epoch, 2);
}

TEST(MasterCore, LabelsAnEpochEndEvaluationWithTheEpochThatEnded) {
  FakeClock clock;
  MasterOptions o = Options(640, 64);  // 10 training tasks, 1 evaluation task
  o.num_epochs = 3;
  o.evaluation_steps = 0;  // a round after every epoch
  auto core = Make(o, clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  for (int epoch = 1; epoch <= 2; ++epoch) {
    // Epoch 2 starts with one task done (b's, below).
    const int before_last = epoch == 1 ? 9 : 8;
    for (int i = 0; i < before_last; ++i) ASSERT_EQ(a.Step(version), TaskType::kTraining);
    // While a holds the epoch's last task, b gets the first of the next.
    const protocol::Task last = a.Take();
    const protocol::Task next = b.Take();
    ASSERT_EQ(last.epoch, epoch);
    ASSERT_EQ(next.epoch, epoch + 1);
    a.Complete(last, version);  // the epoch ends: a round starts
    b.Complete(next, version);
    // The round's one task, before the next epoch goes on.
    const protocol::Task eval = b.Take();
    ASSERT_EQ(eval.type, TaskType::kEvaluation);
    b.Complete(eval, version);
  }
  RunToEnd({&a, &b}, version);
  ASSERT_EQ(core->state(), JobState::kSucceeded) << core->failure_reason();
  std::vector<int> epochs;
  for (const auto& e : core->evaluation_history()) epochs.push_back(e.epoch);
  EXPECT_EQ(epochs, (std::vector<int>{1, 2, 3}));
}

TEST(MasterCore, KeepsTheProgressAtEveryEpochsEnd) {
  FakeClock clock;
  MasterOptions o = Options(640);  // 10 training tasks of 64 records
  o.num_epochs = 2;
  auto core = Make(o, clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  for (int i = 0; i < 9; ++i) a.Step(version);
  const protocol::Task last = a.Take();
  const protocol::Task next = b.Take();  // epoch 2 is handed out
  clock.AdvanceSeconds(7);
  b.Complete(next, version);  // version 10
  a.Complete(last, version);  // version 11 ends epoch 1
  EXPECT_EQ(core->epoch_ends().size(), 1u);
  clock.AdvanceSeconds(5);
  RunToEnd({&a, &b}, version);
  const std::vector<EpochEnd> ends = core->epoch_ends();
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].epoch, 1);
  EXPECT_EQ(ends[0].progress.model_version, 11);
  EXPECT_EQ(ends[0].progress.records_trained, 11 * 64);
  EXPECT_DOUBLE_EQ(ends[0].at_s, 7.0);
  EXPECT_EQ(ends[1].epoch, 2);
  EXPECT_EQ(ends[1].progress.model_version, 20);
  EXPECT_EQ(ends[1].progress.records_trained, 1280);
  EXPECT_DOUBLE_EQ(ends[1].at_s, 12.0);
}

TEST(MasterCore, SkipsVersionsThatPassWhileARoundIsInFlight) {
  FakeClock clock;
  MasterOptions o = Options(640, 64);  // 10 training tasks, 1 evaluation task
  o.evaluation_steps = 2;
  auto core = Make(o, clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  protocol::Task t1 = a.Take(), t2 = a.Take();
  a.Complete(t1, version);
  a.Complete(t2, version);  // version 2: a round starts
  protocol::Task eval = b.Take();
  ASSERT_EQ(eval.type, TaskType::kEvaluation);
  EXPECT_EQ(eval.model_version, 2);
  for (int i = 0; i < 4; ++i) a.Step(version);  // versions 3..6 pass
  b.Complete(eval, version);
  a.Step(version);  // 7: the next multiple after the skipped 6 is 8
  protocol::Task t8 = a.Take();
  ASSERT_EQ(t8.type, TaskType::kTraining);  // no round queued at 7
  a.Complete(t8, version);                  // 8: a round starts
  RunToEnd({&a, &b}, version);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  std::vector<int64_t> versions;
  for (const auto& e : core->evaluation_history()) versions.push_back(e.model_version);
  EXPECT_EQ(versions, (std::vector<int64_t>{2, 8, 10}));
}

TEST(MasterCore, RunsAnEvaluationOnlyJob) {
  FakeClock clock;
  MasterOptions o = Options(0, 300);
  o.make_metrics = BinaryMetrics();
  auto core = Make(o, clock);
  SimulatedWorker w(*core, "worker-0");
  std::atomic<int64_t> version{0};
  RunToEnd({&w}, version);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  auto history = core->evaluation_history();
  ASSERT_EQ(history.size(), 1u);
  EXPECT_TRUE(history[0].final);
  EXPECT_NEAR(history[0].result.metrics[1].second, MetricsOver(0, 300)[1]->Result(), 1e-12);
}

TEST(MasterCore, StoresEveryPredictionRecordOnceWhateverTheOrder) {
  FakeClock clock;
  MasterOptions o = Options(0, 0, 300);
  std::vector<int> stored(300, 0);
  std::vector<float> value(300, -1);
  o.store_predictions = [&](int64_t begin, int64_t end, const tensor::Tensor& rows) {
    const std::vector<float> v = rows.ToVector();
    for (int64_t i = begin; i < end; ++i) {
      ++stored[i];
      value[i] = v[i - begin];
    }
    return Status::Ok();
  };
  auto core = Make(o, clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  EXPECT_FALSE(core->PredictionsComplete().ok());
  RunToEnd({&a, &b}, version);
  EXPECT_EQ(core->state(), JobState::kSucceeded);
  EXPECT_TRUE(core->PredictionsComplete().ok());
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(stored[i], 1) << i;
    ASSERT_EQ(value[i], i);
  }
}

TEST(MasterCore, FailsThePredictionJobOnOutputsOfTheWrongShape) {
  FakeClock clock;
  auto core = Make(Options(0, 0, 100), clock);
  SimulatedWorker w(*core, "worker-0");
  protocol::Task t = w.Take();
  protocol::ReportTaskRequest r;
  r.worker_id = w.id();
  r.task_id = t.id;
  r.predictions = tensor::Tensor::FromVector({1, 1}, {0});
  ASSERT_TRUE(core->ReportTask(r).ok());
  EXPECT_EQ(core->state(), JobState::kFailed);
  EXPECT_EQ(core->failure_reason(),
            "prediction data records [0, 64): expected predictions of 64 rows, "
            "got shape [1, 1]");
}

TEST(MasterCore, ScalesDownByAskingWorkersToLeaveWithoutCountingFailures) {
  FakeClock clock;
  MasterOptions o = Options(640);
  o.max_task_failures = 1;
  auto core = Make(o, clock);
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1"), c(*core, "worker-2");
  std::atomic<int64_t> version{0};
  protocol::Task t = c.Take();
  EXPECT_FALSE(c.Heartbeat());
  core->SetTargetWorkers(2);  // the target; whom to ask is the owner's choice
  EXPECT_EQ(core->target_workers(), 2);
  EXPECT_FALSE(c.Heartbeat());
  EXPECT_TRUE(core->RequestStop("worker-2"));
  EXPECT_TRUE(c.Heartbeat());
  EXPECT_FALSE(a.Heartbeat());
  EXPECT_EQ(c.Take().type, TaskType::kDone);
  c.Fail(t, "asked to leave");  // handed back, not a failure
  EXPECT_EQ(core->state(), JobState::kRunning);
  EXPECT_EQ(a.Take().id, t.id);  // at the front
  core->OnWorkerExit("worker-2");
  // A worker beyond the target is admitted but asked to leave.
  SimulatedWorker d(*core, "worker-3");
  EXPECT_TRUE(d.Heartbeat());
  EXPECT_TRUE(core->RequestStop("worker-1"));
  EXPECT_EQ(b.Take().type, TaskType::kDone);
  EXPECT_FALSE(core->RequestStop("worker-9"));
  // The target is durable state: a new master keeps it (tests/roles/master/
  // master_recovery_test.cc).
}

TEST(MasterCore, FailIsFinalAndTheFirstReasonWins) {
  FakeClock clock;
  auto core = Make(Options(640), clock);
  SimulatedWorker w(*core, "worker-0");
  core->Fail("ps-0 could not be relaunched");
  core->Fail("second");
  EXPECT_EQ(core->state(), JobState::kFailed);
  EXPECT_EQ(core->failure_reason(), "ps-0 could not be relaunched");
  EXPECT_EQ(w.Take().type, TaskType::kDone);
}

}  // namespace
}  // namespace edl::roles::master
