// Many worker threads and a ticking thread hammer one MasterCore.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "roles/master/master_core.h"
#include "tests/roles/master/simulated_worker.h"

namespace edl::roles::master {
namespace {

using testing::SimulatedWorker;

TEST(MasterCoreConcurrency, WorkerThreadsTrainEveryRecordExactlyOnce) {
  FakeClock clock;
  MasterOptions o;
  o.job_name = "hammer";
  o.records.training = 20000;
  o.records.validation = 1000;
  o.minibatch_size = 5;
  o.num_minibatches_per_task = 2;  // 2000 training tasks per epoch
  o.num_epochs = 3;
  o.evaluation_steps = 500;
  o.make_metrics = testing::BinaryMetrics();
  auto core = MasterCore::Create(o, clock).value();

  std::atomic<int64_t> version{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      SimulatedWorker w(*core, "worker-" + std::to_string(i));
      for (int n = 0;; ++n) {
        const TaskType t = w.Step(version);
        if (t == TaskType::kDone) break;
        if (t == TaskType::kWait) std::this_thread::yield();
        if (n % 16 == 0) w.Heartbeat();
      }
    });
  }
  std::thread observer([&] {
    while (!stop) {
      core->Tick();
      EXPECT_FALSE(core->StatusJson().empty());
      EXPECT_FALSE(core->PrometheusText().empty());
      std::this_thread::yield();
    }
  });
  for (auto& t : threads) t.join();
  stop = true;
  observer.join();

  ASSERT_EQ(core->state(), JobState::kSucceeded) << core->failure_reason();
  EXPECT_EQ(version, 3 * 2000);
  for (const EpochLedger& e : core->ledger()) {
    EXPECT_EQ(e.trained, 20000);
    EXPECT_EQ(e.missing, 0);
    EXPECT_EQ(e.trained_more_than_once, 0);
  }
  auto history = core->evaluation_history();
  ASSERT_FALSE(history.empty());
  EXPECT_TRUE(history.back().final);
  EXPECT_EQ(history.back().model_version, 6000);
  auto whole = testing::MetricsOver(0, 1000);
  for (const EvaluationRecord& r : history) {
    EXPECT_EQ(r.result.samples, 1000);
    EXPECT_NEAR(r.result.metrics[1].second, whole[1]->Result(), 1e-12);
  }
}

}  // namespace
}  // namespace edl::roles::master
