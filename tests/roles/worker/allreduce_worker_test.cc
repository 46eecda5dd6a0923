// AllreduceWorker in process: worker threads with their own models and real
// ring sockets on loopback, driven by an in-process MasterCore.
#include "roles/worker/allreduce_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>

#include "base/clock.h"
#include "roles/local/model_source.h"
#include "roles/master/master_core.h"

namespace edl::roles::worker {
namespace {

const std::string kTrain = std::string(EDL_FASHION_MNIST) + "/train-images-idx3-ubyte.gz";

// One worker: its own model, data and thread.
struct Member {
  std::string name;
  CompiledModel cm;
  std::unique_ptr<data::Source> source;
  std::unique_ptr<AllreduceWorker> worker;
  std::thread thread;
  Status result;
};

class RingOfWorkers {
 public:
  RingOfWorkers(int n, int64_t records, int epochs) {
    master::MasterOptions o;
    o.job_name = "ring";
    o.records.training = records;
    o.minibatch_size = 32;
    o.num_minibatches_per_task = 1;
    o.num_epochs = epochs;
    o.evaluation_steps = -1;
    o.heartbeat_timeout_s = 5;
    o.shuffle = false;
    o.ring_start_members = n;
    auto core = master::MasterCore::Create(o, SystemClock());
    EDL_CHECK(core.ok()) << core.status().message();
    core_ = std::move(*core);
    for (int i = 0; i < n; ++i) {
      auto m = std::make_unique<Member>();
      m->name = "worker-" + std::to_string(i);
      ModelOptions mo;
      mo.model_def = "zoo:fashion_mnist_mlp";
      mo.seed = 100 + i;  // different starting weights: the ring must align them
      mo.num_threads = 1;
      auto cm = CompileModel(mo);
      EDL_CHECK(cm.ok()) << cm.status().message();
      m->cm = std::move(*cm);
      auto source = OpenSourceForModel("--training_data", kTrain, m->cm, true);
      EDL_CHECK(source.ok()) << source.status().message();
      m->source = std::move(*source);
      AllreduceWorkerOptions wo;
      wo.name = m->name;
      wo.minibatch_size = 32;
      wo.shuffle = false;
      wo.secret = "test-secret";
      wo.heartbeat_interval = std::chrono::milliseconds(100);
      wo.wait_interval = std::chrono::milliseconds(10);
      wo.collective_timeout = std::chrono::milliseconds(5000);
      m->worker = std::make_unique<AllreduceWorker>(
          wo, m->cm, WorkerData{m->source.get(), nullptr, nullptr}, *core_, SystemClock());
      members_.push_back(std::move(m));
    }
  }
  ~RingOfWorkers() {
    for (auto& m : members_) {
      m->worker->RequestStop();
      if (m->thread.joinable()) m->thread.join();
    }
  }

  void Start() {
    for (auto& m : members_) {
      Member* p = m.get();
      p->thread = std::thread([p] { p->result = p->worker->Run(); });
    }
  }
  // Joins member i's thread and tells the master its process ended, as
  // the supervisor does.
  void Exited(int i) {
    members_[i]->thread.join();
    core_->OnWorkerExit(members_[i]->name);
  }
  void JoinAll() {
    for (size_t i = 0; i < members_.size(); ++i) {
      if (members_[i]->thread.joinable()) Exited(static_cast<int>(i));
    }
  }

  master::MasterCore& core() { return *core_; }
  Member& member(int i) { return *members_[i]; }

 private:
  std::unique_ptr<master::MasterCore> core_;
  std::vector<std::unique_ptr<Member>> members_;
};

bool SameWeights(CompiledModel& a, CompiledModel& b) {
  auto pa = a.model->parameters(), pb = b.model->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    if (std::memcmp(pa[i]->value.f32(), pb[i]->value.f32(), pa[i]->value.bytes()) != 0) {
      return false;
    }
  }
  return true;
}

int64_t TrainedRecords(master::MasterCore& core) {
  int64_t n = 0;
  for (const auto& e : core.ledger()) n += e.trained;
  return n;
}

TEST(AllreduceWorker, ThreeMembersTrainEveryTaskOnceAndEndWithIdenticalWeights) {
  RingOfWorkers ring(3, 1920, 2);  // 60 tasks of 32 per epoch: 20 steps
  ring.Start();
  ASSERT_TRUE(ring.core().WaitUntilFinished(std::chrono::seconds(120)));
  ring.JoinAll();
  ASSERT_EQ(ring.core().state(), master::JobState::kSucceeded) << ring.core().failure_reason();
  // 40 full steps, plus at most one partial step after the epoch boundary
  // (a member that asks before the epoch's last reports arrived waits out
  // that step).
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(ring.member(i).result.ok()) << ring.member(i).result.message();
    EXPECT_GE(ring.member(i).worker->steps(), 40) << i;
    EXPECT_LE(ring.member(i).worker->steps(), 42) << i;
    EXPECT_EQ(ring.member(i).worker->steps(), ring.member(0).worker->steps()) << i;
  }
  EXPECT_EQ(ring.member(0).worker->tasks_done() + ring.member(1).worker->tasks_done() +
                ring.member(2).worker->tasks_done(),
            120);
  EXPECT_TRUE(SameWeights(ring.member(0).cm, ring.member(1).cm));
  EXPECT_TRUE(SameWeights(ring.member(0).cm, ring.member(2).cm));
  EXPECT_EQ(TrainedRecords(ring.core()), 2 * 1920);
  EXPECT_NE(ring.core().FinalReport().find("0 missing"), std::string::npos)
      << ring.core().FinalReport();
}

TEST(AllreduceWorker, AMemberThatStopsMidJobLeavesAndTheOthersFinishWithoutIt) {
  RingOfWorkers ring(3, 3200, 1);  // 100 steps of 3 tasks at full size
  ring.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ring.core().model_version() < 10 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(ring.core().model_version(), 10);
  ring.member(1).worker->RequestStop();
  ring.Exited(1);
  EXPECT_TRUE(ring.member(1).result.ok()) << ring.member(1).result.message();
  ASSERT_TRUE(ring.core().WaitUntilFinished(std::chrono::seconds(120)));
  ring.JoinAll();
  ASSERT_EQ(ring.core().state(), master::JobState::kSucceeded) << ring.core().failure_reason();
  EXPECT_TRUE(SameWeights(ring.member(0).cm, ring.member(2).cm));
  EXPECT_EQ(ring.member(0).worker->steps(), ring.member(2).worker->steps());
  // The two re-formed (at least once more than the first ring) and redid
  // at most the one step in flight each.
  for (int i : {0, 2}) {
    EXPECT_GE(ring.member(i).worker->reformations(), 2) << i;
    EXPECT_LE(ring.member(i).worker->redone_steps(), 1) << i;
  }
  EXPECT_EQ(TrainedRecords(ring.core()), 3200);
  EXPECT_NE(ring.core().FinalReport().find("0 missing, 0 trained twice"), std::string::npos)
      << ring.core().FinalReport();
}

}  // namespace
}  // namespace edl::roles::worker
