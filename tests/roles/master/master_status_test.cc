#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "roles/master/master_core.h"
#include "tests/roles/master/simulated_worker.h"

namespace edl::roles::master {
namespace {

using testing::SimulatedWorker;

MasterOptions Options() {
  MasterOptions o;
  o.job_name = "fm";
  o.records.training = 1280;
  o.records.validation = 128;
  o.minibatch_size = 16;
  o.num_minibatches_per_task = 4;  // 20 training tasks, 2 evaluation tasks
  o.num_epochs = 2;
  o.evaluation_steps = 5;
  o.make_metrics = testing::BinaryMetrics();
  return o;
}

TEST(MasterStatus, JsonHasTheJobWorkersTasksMetricsAndLedger) {
  FakeClock clock;
  auto core = MasterCore::Create(Options(), clock).value();
  SimulatedWorker a(*core, "worker-0"), b(*core, "worker-1");
  std::atomic<int64_t> version{0};
  for (int i = 0; i < 5; ++i) a.Step(version);  // version 5: a round
  a.Step(version);                              // evaluation task 1
  a.Step(version);                              // evaluation task 2
  protocol::Task held = b.Take();
  clock.AdvanceSeconds(1.5);
  a.Heartbeat();

  auto j = nlohmann::json::parse(core->StatusJson());
  EXPECT_EQ(j["job"], "fm");
  EXPECT_EQ(j["state"], "running");
  EXPECT_EQ(j["reason"], "");
  EXPECT_EQ(j["epoch"], 1);
  EXPECT_EQ(j["num_epochs"], 2);
  EXPECT_EQ(j["model_version"], 5);
  ASSERT_EQ(j["workers"].size(), 2u);
  const auto& wb = j["workers"][1];
  EXPECT_EQ(wb["id"], b.id());
  EXPECT_EQ(wb["name"], "worker-1");
  EXPECT_EQ(wb["pid"], 1000);
  EXPECT_DOUBLE_EQ(wb["last_heartbeat_age_s"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["workers"][0]["last_heartbeat_age_s"].get<double>(), 0);
  EXPECT_EQ(wb["stopping"], false);
  ASSERT_EQ(wb["tasks"].size(), 1u);
  EXPECT_EQ(wb["tasks"][0]["id"], held.id);
  EXPECT_EQ(wb["tasks"][0]["type"], "training");
  EXPECT_EQ(wb["tasks"][0]["begin"], held.begin);
  EXPECT_EQ(wb["tasks"][0]["end"], held.end);
  EXPECT_EQ(wb["tasks"][0]["epoch"], 1);
  EXPECT_EQ(j["workers_registered"], 2);
  EXPECT_EQ(j["workers_lost"], 0);
  EXPECT_EQ(j["tasks"]["training"]["todo"], 40 - 6);
  EXPECT_EQ(j["tasks"]["training"]["doing"], 1);
  EXPECT_EQ(j["tasks"]["training"]["done"], 5);
  EXPECT_EQ(j["tasks"]["evaluation"]["done"], 2);
  EXPECT_EQ(j["tasks"]["prediction"]["todo"], 0);
  ASSERT_EQ(j["evaluations"].size(), 1u);
  EXPECT_EQ(j["evaluations"][0]["model_version"], 5);
  EXPECT_EQ(j["evaluations"][0]["samples"], 128);
  EXPECT_TRUE(j["evaluations"][0]["metrics"].contains("auc"));
  EXPECT_TRUE(j["evaluations"][0]["metrics"].contains("accuracy"));
  ASSERT_EQ(j["ledger"].size(), 2u);
  EXPECT_EQ(j["ledger"][0]["trained"], 5 * 64);
  EXPECT_EQ(j["ledger"][1]["pending"], 1280);
  EXPECT_EQ(j["records_trained_total"], 5 * 64);
}

TEST(MasterStatus, CallsARunningJobsUntrainedRecordsPendingAndAnEndedJobsMissing) {
  FakeClock clock;
  auto core = MasterCore::Create(Options(), clock).value();
  SimulatedWorker a(*core, "worker-0");
  std::atomic<int64_t> version{0};
  for (int i = 0; i < 3; ++i) a.Step(version);  // 3 of epoch 1's 20 tasks of 64 records
  auto running = nlohmann::json::parse(core->StatusJson())["ledger"];
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0]["trained"], 3 * 64);
  EXPECT_EQ(running[0]["pending"], 1280 - 3 * 64);
  EXPECT_EQ(running[0]["missing"], 0);
  EXPECT_EQ(running[1]["pending"], 1280);
  EXPECT_EQ(running[1]["missing"], 0);
  EXPECT_EQ(core->ledger()[0].pending, 1280 - 3 * 64);
  EXPECT_EQ(core->ledger()[0].missing, 0);
  EXPECT_NE(core->FinalReport().find("epoch 1: 192/1280 records trained, 1088 pending, "),
            std::string::npos)
      << core->FinalReport();

  core->Fail("stopped by the test");
  auto ended = nlohmann::json::parse(core->StatusJson())["ledger"];
  EXPECT_EQ(ended[0]["trained"], 3 * 64);
  EXPECT_EQ(ended[0]["pending"], 0);
  EXPECT_EQ(ended[0]["missing"], 1280 - 3 * 64);
  EXPECT_EQ(ended[1]["missing"], 1280);
  EXPECT_EQ(core->ledger()[0].missing, 1280 - 3 * 64);
  EXPECT_NE(core->FinalReport().find("epoch 1: 192/1280 records trained, 1088 missing, "),
            std::string::npos)
      << core->FinalReport();
}

TEST(MasterStatus, PrometheusTextIsInTheExpositionFormat) {
  FakeClock clock;
  auto core = MasterCore::Create(Options(), clock).value();
  SimulatedWorker a(*core, "worker-0");
  std::atomic<int64_t> version{0};
  for (int i = 0; i < 7; ++i) a.Step(version);
  a.Take();
  const std::string text = core->PrometheusText();
  for (const char* line :
       {"# TYPE edl_tasks gauge", "edl_tasks{state=\"doing\",type=\"training\"} 1",
        "edl_tasks{state=\"done\",type=\"training\"} 5",
        "edl_tasks{state=\"todo\",type=\"training\"} 34",
        "edl_tasks{state=\"done\",type=\"evaluation\"} 2", "edl_model_version 5", "edl_epoch 1",
        "edl_workers_alive 1", "# TYPE edl_records_trained_total counter",
        "edl_records_trained_total 320", "edl_evaluation_model_version 5",
        "edl_job_state{state=\"running\"} 1", "edl_job_state{state=\"failed\"} 0"}) {
    EXPECT_NE(text.find(std::string(line) + "\n"), std::string::npos) << line;
  }
  EXPECT_NE(text.find("edl_evaluation_metric{name=\"auc\"} 0."), std::string::npos);
  EXPECT_NE(text.find("edl_evaluation_metric{name=\"loss\"} "), std::string::npos);
  const std::regex sample(R"re([a-z_]+(\{([a-z_]+="[^"\\]*",?)+\})? -?[0-9][0-9.e+-]*)re");
  const std::regex comment(R"(# (HELP|TYPE) [a-z_]+ .+)");
  std::istringstream lines(text);
  int samples = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_match(line, sample) || std::regex_match(line, comment)) << line;
    samples += line[0] != '#';
  }
  EXPECT_GT(samples, 15);
}

TEST(MasterStatus, FinalReportHasTheOutcomeLedgerAndLastEvaluation) {
  FakeClock clock;
  MasterOptions o = Options();
  o.num_epochs = 1;
  auto core = MasterCore::Create(o, clock).value();
  SimulatedWorker a(*core, "worker-0");
  std::atomic<int64_t> version{0};
  while (a.Step(version) != TaskType::kDone) {
  }
  const std::string report = core->FinalReport();
  EXPECT_EQ(report.rfind("job fm succeeded\n"
                         "epoch 1: 1280/1280 records trained, 0 missing, 0 trained "
                         "twice or more\n"
                         "evaluation at version 20: loss ",
                         0),
            0u)
      << report;
}

TEST(MasterStatus, FinalReportHasTheTrainingThroughputFromFirstTaskToLastReport) {
  FakeClock clock;
  MasterOptions o = Options();  // 2 epochs of 1280 records, evaluations between
  auto core = MasterCore::Create(o, clock).value();
  SimulatedWorker a(*core, "worker-0");
  std::atomic<int64_t> version{0};
  clock.AdvanceSeconds(100);  // before the first task: not counted
  double first = -1, last = -1;
  for (;;) {
    const double now = static_cast<double>(clock.NowNanos()) * 1e-9;
    const TaskType type = a.Step(version);  // takes and reports a task at `now`
    if (type == TaskType::kDone) break;
    if (type == TaskType::kTraining) {
      if (first < 0) first = now;
      last = now;
    }
    clock.AdvanceSeconds(0.5);
  }
  ASSERT_GT(last, first);
  char want[128];
  std::snprintf(want, sizeof want, "training: 2560 records in %.1f s, %.0f records/s\n",
                last - first, 2560 / (last - first));
  EXPECT_NE(core->FinalReport().find(want), std::string::npos) << core->FinalReport() << want;
}

TEST(MasterStatus, ThousandsOfEvaluationsAreDownSampledToAFixedNumber) {
  FakeClock clock;
  MasterOptions o = Options();
  o.records.training = 64 * 1200;  // 1,200 tasks of 4 batches: a version each
  o.records.validation = 16;       // one evaluation task a round
  o.num_epochs = 1;
  o.evaluation_steps = 1;  // a round after every version
  auto core = MasterCore::Create(o, clock).value();
  SimulatedWorker a(*core, "worker-0");
  std::atomic<int64_t> version{0};
  for (int i = 0; i < 5000 && core->state() == JobState::kRunning; ++i) a.Step(version);
  ASSERT_EQ(core->state(), JobState::kSucceeded);
  const size_t rounds = core->evaluation_history().size();
  ASSERT_GT(rounds, 1000u);
  auto j = nlohmann::json::parse(core->StatusJson());
  EXPECT_EQ(j["evaluations_total"], rounds);
  ASSERT_EQ(j["evaluations"].size(), 500u);
  EXPECT_EQ(j["evaluations"].front()["model_version"],
            core->evaluation_history().front().model_version);
  EXPECT_EQ(j["evaluations"].back()["model_version"],
            core->evaluation_history().back().model_version);
  for (size_t k = 1; k < 500; ++k) {
    EXPECT_GE(j["evaluations"][k]["model_version"].get<int64_t>(),  // in order
              j["evaluations"][k - 1]["model_version"].get<int64_t>());
  }
}

}  // namespace
}  // namespace edl::roles::master
