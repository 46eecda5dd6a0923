// Reading ahead across tasks: a PS worker whose data is streamed leases its
// next task once the current task's records are all read, so it holds two
// leases at times, and still trains every record exactly once; with data
// in memory it holds one lease at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "base/clock.h"
#include "roles/local/model_source.h"
#include "roles/master/master_core.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/ps_client.h"
#include "roles/worker/worker.h"
#include "tests/roles/worker/mlp_job.h"

namespace edl::roles::worker {
namespace {

using testing::kTrain;
using testing::Mlp;

// Passes every call to the master, counting the leases the worker holds.
class LeaseCountingMaster : public protocol::MasterService {
 public:
  explicit LeaseCountingMaster(protocol::MasterService& m) : m_(m) {}
  Result<protocol::RegisterWorkerResponse> RegisterWorker(
      const protocol::RegisterWorkerRequest& r) override {
    return m_.RegisterWorker(r);
  }
  Result<protocol::HeartbeatResponse> Heartbeat(const protocol::HeartbeatRequest& r) override {
    return m_.Heartbeat(r);
  }
  Result<protocol::Task> GetTask(const protocol::GetTaskRequest& r) override {
    auto task = m_.GetTask(r);
    if (task.ok() && task->type != protocol::TaskType::kWait &&
        task->type != protocol::TaskType::kDone) {
      std::lock_guard<std::mutex> lock(mu_);
      ++held_;
      most_held_ = std::max(most_held_, held_);
    }
    return task;
  }
  Result<protocol::ReportTaskResponse> ReportTask(const protocol::ReportTaskRequest& r) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --held_;
    }
    return m_.ReportTask(r);
  }
  int most_held() {
    std::lock_guard<std::mutex> lock(mu_);
    return most_held_;
  }

 private:
  protocol::MasterService& m_;
  std::mutex mu_;
  int held_ = 0;
  int most_held_ = 0;
};

// The records of a loaded source, claiming to be read from disk.
class StreamedLike : public data::Source {
 public:
  explicit StreamedLike(const data::Source& s) : s_(s) {}
  const std::string& name() const override { return s_.name(); }
  int64_t num_records() const override { return s_.num_records(); }
  bool has_labels() const override { return s_.has_labels(); }
  const std::vector<data::InputInfo>& inputs() const override { return s_.inputs(); }
  Result<data::Examples> Read(int64_t begin, int64_t end) const override {
    return s_.Read(begin, end);
  }
  Result<data::Examples> Gather(const std::vector<int64_t>& indices) const override {
    return s_.Gather(indices);
  }
  bool streamed() const override { return true; }

 private:
  const data::Source& s_;
};

struct Leases {
  int most_leases = 0;
  std::string ledger;
};

// One worker trains 1,280 records in 10 tasks of 4 minibatches of 32.
Leases Train(bool streamed) {
  auto core = testing::OneEpochMaster("ahead", 1280, /*shuffle=*/true);
  LeaseCountingMaster master(*core);
  auto ps = ps::ParameterServer::Create({}, Mlp(/*for_ps=*/true));
  EDL_CHECK(ps.ok()) << ps.status().message();
  ps::PsClient client({ps->get()});
  CompiledModel cm = Mlp(/*for_ps=*/false);
  auto loaded = OpenSourceForModel("--training_data", kTrain, cm, true);
  EDL_CHECK(loaded.ok()) << loaded.status().message();
  StreamedLike from_disk(**loaded);
  WorkerOptions wo;
  wo.minibatch_size = 32;
  wo.wait_interval = std::chrono::milliseconds(10);
  const data::Source* source = streamed ? &from_disk : loaded->get();
  Worker w(wo, cm, WorkerData{source, nullptr, nullptr}, master, client, SystemClock());
  Status s = w.Run();
  EDL_CHECK(s.ok()) << s.message();
  EXPECT_EQ(w.tasks_done(), 10);
  return {master.most_held(), core->FinalReport()};
}

TEST(ReadAhead, AWorkerStreamingItsDataLeasesTheNextTaskWhileTrainingAndTrainsEachRecordOnce) {
  const Leases r = Train(/*streamed=*/true);
  EXPECT_EQ(r.most_leases, 2);
  EXPECT_NE(r.ledger.find("epoch 1: 1280/1280 records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.ledger;
}

TEST(ReadAhead, AWorkerHoldingItsDataInMemoryHoldsOneLeaseAtATime) {
  const Leases r = Train(/*streamed=*/false);
  EXPECT_EQ(r.most_leases, 1);
  EXPECT_NE(r.ledger.find("epoch 1: 1280/1280 records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.ledger;
}

}  // namespace
}  // namespace edl::roles::worker
