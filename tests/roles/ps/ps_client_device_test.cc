// A parameter-server worker step with the worker's model on the host-memory
// fake device (tests/testing/host_memory_device_runtime.h): pulls land in
// device parameters, the forward/backward runs on the device, and pushes
// send host copies (the wire CHECKs that it only sees host tensors). The
// parameter servers must end where they end with a CPU worker.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/autograd.h"
#include "ps_test_util.h"
#include "roles/local/evaluation.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/ps_client.h"
#include "tensor/device_runtime.h"
#include "tests/testing/host_memory_device_runtime.h"

namespace edl::roles::ps {
namespace {

using tensor::Device;
using tensor::Tensor;
using testing::Find;
using testing::MakeModel;
using testing::MakePs;
using testing::Shard;

constexpr char kAdam[] = R"({"class_name": "Adam", "config": {"learning_rate": 0.05}})";

struct Job {
  std::vector<std::unique_ptr<ParameterServer>> servers;
  std::unique_ptr<PsClient> client;
  CompiledModel worker;
};

Job MakeJob(Device device) {
  Job j;
  std::vector<protocol::PsService*> services;
  for (int i = 0; i < 2; ++i) {
    j.servers.push_back(MakePs(Shard(i, 2), kAdam));
    services.push_back(j.servers.back().get());
  }
  j.client = std::make_unique<PsClient>(services);
  j.worker = MakeModel(kAdam, /*seed=*/9);  // other weights than the PS: pulls matter
  j.worker.device = device;
  j.worker.model->MoveTo(device);
  return j;
}

// One worker step as roles/worker/worker.cc takes it.
void Step(Job& j, int k) {
  const Tensor ids = Tensor::FromInts({4, 3}, {3, 8, 3, 11, 12, 13, 0, 8, 49, 7, 7, k});
  const Tensor labels = Tensor::FromVector({4, 2}, {1, -1, 0.5f, 2, -0.5f, 0, 1.5f, float(k) / 4});
  auto params = j.worker.model->parameters();
  ASSERT_TRUE(j.client->PullDense(params).ok());
  ASSERT_TRUE(j.client->PullRows(*Find(*j.worker.model, "emb/embeddings"), ids).ok());
  for (nn::Parameter* p : params) ASSERT_EQ(p->value.device(), j.worker.device) << p->name;
  std::vector<nn::Var> out = j.worker.model->Forward({ids.On(j.worker.device)}, true);
  ASSERT_EQ(out[0].value().device(), j.worker.device);
  nn::Backward(j.worker.loss->Compute(out[0], labels));
  auto pushed = j.client->PushGradients(params);
  ASSERT_TRUE(pushed.ok()) << pushed.status().message();
  EXPECT_TRUE(pushed->accepted);
  for (nn::Parameter* p : params) p->ZeroGrad();
}

TEST(PsClientOnDevice, AWorkerOnTheDeviceTrainsTheParameterServersLikeACpuWorker) {
  ::edl::testing::HostMemoryDeviceRuntime fake;
  tensor::ScopedDeviceRuntime scope(Device::kCUDA, &fake);
  Job cpu = MakeJob(Device::kCPU);
  Job dev = MakeJob(Device::kCUDA);
  for (int k = 1; k <= 4; ++k) {
    Step(cpu, k);
    Step(dev, k);
  }
  EXPECT_GT(fake.uploads(), 0);
  EXPECT_GT(fake.downloads(), 0);
  // Pull the final state into host models and compare.
  CompiledModel a = MakeModel(kAdam, 1), b = MakeModel(kAdam, 1);
  const Tensor all_ids = Tensor::FromInts({2, 3}, {3, 8, 11, 12, 13, 49});
  ASSERT_TRUE(cpu.client->PullDense(a.model->parameters()).ok());
  ASSERT_TRUE(dev.client->PullDense(b.model->parameters()).ok());
  ASSERT_TRUE(cpu.client->PullRows(*Find(*a.model, "emb/embeddings"), all_ids).ok());
  ASSERT_TRUE(dev.client->PullRows(*Find(*b.model, "emb/embeddings"), all_ids).ok());
  for (nn::Parameter* p : a.model->parameters()) {
    const auto x = p->value.ToVector(), y = Find(*b.model, p->name)->value.ToVector();
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(x[i], y[i], 1e-5f * (1 + std::abs(x[i]))) << p->name << "[" << i << "]";
    }
  }
  // The device worker's own table got the pulled rows uploaded in place.
  const Tensor dev_table = Find(*dev.worker.model, "emb/embeddings")->value;
  ASSERT_EQ(dev_table.device(), Device::kCUDA);
  EXPECT_EQ(dev_table.Slice(8, 9).ToVector(),
            Find(*cpu.worker.model, "emb/embeddings")->value.Slice(8, 9).ToVector());
}

}  // namespace
}  // namespace edl::roles::ps
