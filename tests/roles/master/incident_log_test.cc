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
