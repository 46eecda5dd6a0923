// The job's membership incidents and their costs (roles/master/
// incident_log.h), through the master core with a fake clock.
#include "roles/master/incident_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "roles/master/master_core.h"
#include "tests/roles/master/simulated_worker.h"

namespace edl::roles::master {
namespace {

using testing::SimulatedWorker;

MasterOptions Options() {
  MasterOptions o;
  o.job_name = "incidents";
  o.records.training = 1280;
  o.minibatch_size = 16;
  o.num_minibatches_per_task = 4;  // 64-record tasks
  o.num_epochs = 1;
  o.heartbeat_timeout_s = 2;
  return o;
}

TEST(IncidentLog, AKilledWorkersCostsAreTimedFromLastSignOfLifeToItsReplacementsFirstTask) {
  FakeClock clock;
  auto core = MasterCore::Create(Options(), clock).value();
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  a.Step(version);
  protocol::Task held = a.Take();  // in flight when it dies
  clock.AdvanceSeconds(0.5);
  b.Heartbeat();
  core->OnWorkerExit("worker-0", "worker-0 (incarnation 1) killed by signal 9");
  clock.AdvanceSeconds(0.25);
  core->OnReplacementRequested("worker-0");
  clock.AdvanceSeconds(1.5);
  SimulatedWorker a2(*core, "worker-0");  // the replacement registers
  clock.AdvanceSeconds(0.75);
  protocol::Task first = a2.Take();
  ASSERT_EQ(first.type, protocol::TaskType::kTraining);

  auto j = nlohmann::json::parse(core->StatusJson());
  ASSERT_EQ(j["incidents"].size(), 1u) << j.dump();
  const auto& i = j["incidents"][0];
  EXPECT_EQ(i["worker"], "worker-0");
  EXPECT_EQ(i["cause"], "exited: worker-0 (incarnation 1) killed by signal 9");
  EXPECT_DOUBLE_EQ(i["detection_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(i["to_request_s"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(i["pending_s"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(i["to_step_s"].get<double>(), 0.75);
  EXPECT_EQ(i["tasks_put_back"], 1);
  EXPECT_EQ(i["records_put_back"], held.end - held.begin);
  // The report's table shows the same figures.
  const std::string report = core->FinalReport();
  EXPECT_NE(report.find("incidents ("), std::string::npos) << report;
  EXPECT_NE(report.find("      0.50       0.25      1.50      0.75         1/64  exited"),
            std::string::npos)
      << report;
}

TEST(IncidentLog, ASilentWorkerIsAnIncidentAndAStageNotReachedIsNull) {
  FakeClock clock;
  auto core = MasterCore::Create(Options(), clock).value();
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  a.Take();
  clock.AdvanceSeconds(2.5);  // past the 2 s heartbeat timeout
  b.Heartbeat();
  core->Tick();
  auto j = nlohmann::json::parse(core->StatusJson());
  ASSERT_EQ(j["incidents"].size(), 1u) << j.dump();
  const auto& i = j["incidents"][0];
  EXPECT_EQ(i["worker"], "worker-0");
  EXPECT_NE(i["cause"].get<std::string>().find("missed heartbeats"), std::string::npos);
  EXPECT_DOUBLE_EQ(i["detection_s"].get<double>(), 2.5);
  EXPECT_TRUE(i["to_request_s"].is_null());
  EXPECT_TRUE(i["pending_s"].is_null());
  EXPECT_TRUE(i["to_step_s"].is_null());
  EXPECT_EQ(i["tasks_put_back"], 1);
}

TEST(IncidentLog, AWorkerAskedToLeaveIsNoIncident) {
  FakeClock clock;
  auto core = MasterCore::Create(Options(), clock).value();
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  ASSERT_TRUE(core->RequestStop("worker-1"));
  core->OnWorkerExit("worker-1", "worker-1 (incarnation 1) exited with code 0");
  auto j = nlohmann::json::parse(core->StatusJson());
  EXPECT_TRUE(j["incidents"].empty()) << j.dump();
  EXPECT_EQ(core->FinalReport().find("incidents ("), std::string::npos);
}

TEST(IncidentLog, AReplacementsPendingReasonIsKeptOnceItRegisters) {
  IncidentLog log;
  log.OnLost("worker-3", "exited: worker-3 (incarnation 1) preempted", 0, 10, 0, 1, 64);
  log.OnReplacementRequested("worker-3", 20);
  ASSERT_EQ(log.AwaitingReplacement(), std::vector<std::string>{"worker-3"});
  log.OnPendingReason("worker-3", "0/1 nodes are available: 1 Insufficient cpu.");
  log.OnPendingReason("worker-3", "");  // not known to wait any more: the reason stays
  log.OnRegistered("worker-3", 30);
  log.OnPendingReason("worker-3", "too late");  // registered: ignored
  EXPECT_TRUE(log.AwaitingReplacement().empty());
  const auto j = log.ToJson();
  EXPECT_EQ(j[0]["pending_reason"], "0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_NE(log.ToTable().find("preempted (replacement pending: 0/1 nodes are available: 1 "
                               "Insufficient cpu.)"),
            std::string::npos)
      << log.ToTable();
}

TEST(IncidentLog, KeepsTheNewestAndCountsTheDropped) {
  IncidentLog log(2);
  for (int k = 0; k < 3; ++k) {
    log.OnLost("worker-" + std::to_string(k), "exited", 0, 1, int64_t{3723} * 1000000000, 0, 0);
  }
  ASSERT_EQ(log.incidents().size(), 2u);
  EXPECT_EQ(log.incidents()[0].worker, "worker-1");
  EXPECT_EQ(log.dropped(), 1);
  EXPECT_NE(log.ToTable().find("1 older incidents not kept"), std::string::npos);
  EXPECT_NE(log.ToTable().find("  worker-1     01:02:03.0 "), std::string::npos)
      << log.ToTable();  // the detection's UTC time of day
}

}  // namespace
}  // namespace edl::roles::master

namespace edl::roles::master {
namespace {

TEST(IncidentLog, FailedCheckpointsAreOneIncidentPerPsUntilAGoodOne) {
  IncidentLog log;
  log.OnCheckpointFailed("ps-1", 2000, 1000, 1, "disk full", 5'000'000'000);
  log.OnCheckpointFailed("ps-1", 2250, 1000, 2, "still full", 6'000'000'000);
  log.OnCheckpointWritten("ps-0", 2000);  // another PS: nothing to close
  ASSERT_EQ(log.checkpoint_incidents().size(), 1u);
  const CheckpointIncident& c = log.checkpoint_incidents()[0];
  EXPECT_EQ(c.first_failed_version, 2000);
  EXPECT_EQ(c.last_failed_version, 2250);
  EXPECT_EQ(c.failures, 2);
  EXPECT_EQ(c.error, "still full");
  EXPECT_FALSE(c.recovered_version);
  log.OnCheckpointWritten("ps-1", 1000);  // the old good one is no recovery
  EXPECT_FALSE(log.checkpoint_incidents()[0].recovered_version);
  log.OnCheckpointWritten("ps-1", 2500);
  EXPECT_EQ(log.checkpoint_incidents()[0].recovered_version, 2500);
  // A new failure after the recovery is a new incident.
  log.OnCheckpointFailed("ps-1", 4000, 3000, 1, "gone", 7'000'000'000);
  EXPECT_EQ(log.checkpoint_incidents().size(), 2u);
  const nlohmann::json j = log.CheckpointsToJson();
  EXPECT_EQ(j[0]["recovered_version"], 2500) << j.dump();
  EXPECT_TRUE(j[1]["recovered_version"].is_null()) << j.dump();
  EXPECT_EQ(j[1]["last_good_version"], 3000) << j.dump();
  const std::string table = log.ToTable();
  EXPECT_NE(table.find("ps-1: 2 checkpoint attempt(s) failed from version 2000 to 2250 (last "
                       "good version 1000; a good one again at version 2500): still full"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("none good since): gone"), std::string::npos) << table;
}

TEST(IncidentLog, ANewMasterShowsTheTimelineTheLastOneSavedBeforeItsOwn) {
  IncidentLog old;
  old.OnLost("worker-1", "exited: killed by signal 9", 0, 500'000'000, 1'700'000'000'000'000'000, 1,
             256);
  old.OnCheckpointFailed("ps-0", 200, 100, 1, "disk full", 1'700'000'001'000'000'000);
  IncidentLog now;
  ASSERT_TRUE(now.Restore(old.ToSaved()));
  now.OnLost("worker-0", "missed heartbeats for 2.1 s", 0, 1, 1'700'000'002'000'000'000, 0, 0);
  const nlohmann::json incidents = now.ToJson();
  ASSERT_EQ(incidents.size(), 2u) << incidents.dump();
  EXPECT_EQ(incidents[0]["worker"], "worker-1");
  EXPECT_EQ(incidents[0]["records_put_back"], 256);
  EXPECT_EQ(incidents[1]["worker"], "worker-0");
  EXPECT_EQ(now.CheckpointsToJson().size(), 1u);
  EXPECT_NE(now.ToTable().find("worker-1"), std::string::npos) << now.ToTable();
  // Twice over: a third master keeps both.
  IncidentLog third;
  ASSERT_TRUE(third.Restore(now.ToSaved()));
  EXPECT_EQ(third.ToJson().size(), 2u);
}

TEST(IncidentLog, RefusesASavedLogThatIsNotOne) {
  for (const std::string bad :
       {"", "[]", R"({"incidents":[]})", R"({"incidents":{},"checkpoints":[]})",
        R"({"incidents":[{"worker":"w"}],"checkpoints":[]})",
        R"({"incidents":[],"checkpoints":[{"ps":1,"error":""}]})"}) {
    IncidentLog log;
    EXPECT_FALSE(log.Restore(bad)) << bad;
    EXPECT_TRUE(log.ToJson().empty()) << bad;
  }
}

TEST(IncidentLog, TheCoreFailsTheJobWhenNoCheckpointSucceededForTheIntervalsAllowed) {
  MasterOptions o;
  o.records.training = 1024;
  o.checkpoint_steps = 100;
  o.max_failed_checkpoint_intervals = 3;
  FakeClock clock;
  auto core = MasterCore::Create(o, clock);
  ASSERT_TRUE(core.ok());
  (*core)->OnCheckpointHealth("ps-1", 100, 2, 325, "disk full");
  EXPECT_EQ((*core)->state(), JobState::kRunning);
  const nlohmann::json status = nlohmann::json::parse((*core)->StatusJson());
  ASSERT_EQ(status["checkpoint_incidents"].size(), 1u) << status.dump();
  EXPECT_EQ(status["checkpoint_incidents"][0]["last_good_version"], 100);
  (*core)->OnCheckpointHealth("ps-1", 100, 7, 399, "disk full");
  EXPECT_EQ((*core)->state(), JobState::kRunning);
  (*core)->OnCheckpointHealth("ps-1", 100, 8, 400, "disk full");
  EXPECT_EQ((*core)->state(), JobState::kFailed);
  EXPECT_EQ((*core)->failure_reason(),
            "ps-1: no checkpoint written for 3 checkpoint intervals (100 versions each): the "
            "last good one is version 100, and the attempt at version 400 failed (8 failed "
            "attempts): disk full");
}

}  // namespace
}  // namespace edl::roles::master
