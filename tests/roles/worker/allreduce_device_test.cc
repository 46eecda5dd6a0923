// A mixed allreduce ring: one member on the host-memory fake device
// (tests/testing/host_memory_device_runtime.h), one on the CPU. Gradients are
// staged through host buffers for the ring and the reduced ones uploaded;
// both members must end with identical weights.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "base/clock.h"
#include "roles/local/model_source.h"
#include "roles/master/master_core.h"
#include "roles/worker/allreduce_worker.h"
#include "tensor/device_runtime.h"
#include "tests/testing/host_memory_device_runtime.h"

namespace edl::roles::worker {
namespace {

const std::string kTrain = std::string(EDL_FASHION_MNIST) + "/t10k-images-idx3-ubyte.gz";

struct Member {
  CompiledModel cm;
  std::unique_ptr<data::Source> source;
  std::unique_ptr<AllreduceWorker> worker;
  std::thread thread;
  Status result;
};

TEST(AllreduceOnDevice, ADeviceMemberAndACpuMemberEndWithIdenticalWeights) {
  ::edl::testing::HostMemoryDeviceRuntime fake;
  tensor::ScopedDeviceRuntime scope(tensor::Device::kCUDA, &fake);
  master::MasterOptions o;
  o.job_name = "mixed";
  o.records.training = 256;
  o.minibatch_size = 32;
  o.num_minibatches_per_task = 1;
  o.num_epochs = 1;
  o.evaluation_steps = -1;
  o.heartbeat_timeout_s = 5;
  o.shuffle = false;
  o.ring_start_members = 2;
  auto core = master::MasterCore::Create(o, SystemClock());
  ASSERT_TRUE(core.ok()) << core.status().message();
  std::vector<std::unique_ptr<Member>> members;
  for (int i = 0; i < 2; ++i) {
    auto m = std::make_unique<Member>();
    ModelOptions mo;
    mo.model_def = "zoo:fashion_mnist_cnn";  // batch norm state is averaged too
    mo.seed = 100 + i;
    mo.num_threads = 1;
    mo.device = i == 0 ? "cuda" : "cpu";
    auto cm = CompileModel(mo);
    ASSERT_TRUE(cm.ok()) << cm.status().message();
    m->cm = std::move(*cm);
    auto source = OpenSourceForModel("--training_data", kTrain, m->cm, true);
    ASSERT_TRUE(source.ok()) << source.status().message();
    m->source = std::move(*source);
    AllreduceWorkerOptions wo;
    wo.name = "worker-" + std::to_string(i);
    wo.minibatch_size = 32;
    wo.shuffle = false;
    wo.secret = "test-secret";
    wo.heartbeat_interval = std::chrono::milliseconds(100);
    wo.wait_interval = std::chrono::milliseconds(10);
    wo.collective_timeout = std::chrono::milliseconds(5000);
    m->worker = std::make_unique<AllreduceWorker>(
        wo, m->cm, WorkerData{m->source.get(), nullptr, nullptr}, **core, SystemClock());
    members.push_back(std::move(m));
  }
  EXPECT_EQ(members[0]->cm.model->parameters()[0]->value.device(), tensor::Device::kCUDA);
  for (auto& m : members) {
    Member* p = m.get();
    p->thread = std::thread([p] { p->result = p->worker->Run(); });
  }
  const bool finished = (*core)->WaitUntilFinished(std::chrono::seconds(120));
  for (int i = 0; i < 2; ++i) {
    if (!finished) members[i]->worker->RequestStop();
    members[i]->thread.join();
    (*core)->OnWorkerExit("worker-" + std::to_string(i));
  }
  ASSERT_TRUE(finished);
  ASSERT_EQ((*core)->state(), master::JobState::kSucceeded) << (*core)->failure_reason();
  for (auto& m : members) EXPECT_TRUE(m->result.ok()) << m->result.message();
  EXPECT_GE(members[0]->worker->steps(), 4);
  EXPECT_GT(fake.uploads(), 0);
  auto pa = members[0]->cm.model->parameters(), pb = members[1]->cm.model->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i]->value.device(), tensor::Device::kCUDA) << pa[i]->name;
    EXPECT_EQ(pa[i]->value.ToVector(), pb[i]->value.ToVector()) << pa[i]->name;
  }
  members.clear();  // device tensors go before the fake runtime does
}

}  // namespace
}  // namespace edl::roles::worker
