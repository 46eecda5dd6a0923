#include "roles/ps/ps_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ps_test_util.h"
#include "roles/ps/parameter_server.h"

namespace edl::roles::ps {
namespace {

using tensor::Tensor;
using testing::Find;
using testing::kAdam;
using testing::kSgd1;
using testing::MakeModel;
using testing::MakePs;
using testing::Shard;

struct Cluster {
  std::vector<std::unique_ptr<ParameterServer>> servers;
  std::unique_ptr<PsClient> client;
  CompiledModel worker;
};

Cluster MakeCluster(int n, const char* optimizer) {
  Cluster c;
  std::vector<protocol::PsService*> services;
  for (int i = 0; i < n; ++i) {
    c.servers.push_back(MakePs(Shard(i, n), optimizer));
    services.push_back(c.servers.back().get());
  }
  c.client = std::make_unique<PsClient>(services);
  c.worker = MakeModel(optimizer);
  return c;
}

// Fake gradients for step k on the worker's model: dense ramps and a table
// gradient with a repeated id.
void SetGradients(nn::keras::Model& model, int k) {
  for (nn::Parameter* p : model.parameters()) {
    p->ZeroGrad();
    if (p->name == "emb/embeddings") {
      p->sparse_grad = tensor::SparseRows{
          Tensor::FromInts({4}, {3, 8, 3, 11 + k}),
          Tensor::FromVector({4, 4},
                             {1, 2, 3, 4, 0.5f, 0.5f, 0.5f, 0.5f, -1, 0, 1, float(k), 2, 2, 2, 2}),
          50};
    } else {
      p->grad = Tensor::Empty(p->value.shape());
      for (int64_t i = 0; i < p->grad.numel(); ++i) {
        p->grad.f32()[i] = 0.01f * k * (i % 7) - 0.02f;
      }
    }
  }
}

TEST(PsClient, TwoParameterServersTrainExactlyLikeOne) {
  Cluster two = MakeCluster(2, kAdam);
  Cluster one = MakeCluster(1, kAdam);
  const Tensor ids = Tensor::FromInts({2, 3}, {3, 8, 3, 11, 12, 13});
  for (int k = 1; k <= 3; ++k) {
    for (Cluster* c : {&two, &one}) {
      auto params = c->worker.model->parameters();
      ASSERT_TRUE(c->client->PullDense(params).ok());
      ASSERT_TRUE(c->client->PullRows(*Find(*c->worker.model, "emb/embeddings"), ids).ok());
      SetGradients(*c->worker.model, k);
      auto r = c->client->PushGradients(params);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_TRUE(r->accepted);
      EXPECT_EQ(r->versions, std::vector<int64_t>(c->servers.size(), k));
    }
  }
  for (Cluster* c : {&two, &one}) {
    ASSERT_TRUE(c->client->PullDense(c->worker.model->parameters()).ok());
    ASSERT_TRUE(c->client->PullRows(*Find(*c->worker.model, "emb/embeddings"), ids).ok());
  }
  for (nn::Parameter* p : two.worker.model->parameters()) {
    EXPECT_EQ(p->value.ToVector(), Find(*one.worker.model, p->name)->value.ToVector()) << p->name;
  }
  EXPECT_EQ(two.client->versions(), (std::vector<int64_t>{3, 3}));
}

TEST(PsClient, SumsRepeatedIdsAndWritesPulledRowsIntoTheWorkersTable) {
  Cluster c = MakeCluster(2, kSgd1);
  nn::Parameter* table = Find(*c.worker.model, "emb/embeddings");
  const Tensor ids = Tensor::FromInts({2}, {3, 8});
  ASSERT_TRUE(c.client->PullRows(*table, ids).ok());
  const Tensor row3 =
      c.servers[1]->PullRows({"emb/embeddings", Tensor::FromInts({1}, {3})})->values;
  for (int j = 0; j < 4; ++j) EXPECT_EQ(table->value.f32()[3 * 4 + j], row3.f32()[j]);
  SetGradients(*c.worker.model, 1);
  for (nn::Parameter* p : c.worker.model->parameters()) {
    if (p->name != table->name) p->ZeroGrad();
  }
  ASSERT_TRUE(c.client->PushGradients({table}).ok());
  ASSERT_TRUE(c.client->PullRows(*table, ids).ok());
  // Row 3 got {1,2,3,4} + {-1,0,1,1}; SGD with lr 1.
  const float want[] = {0, 2, 4, 5};
  for (int j = 0; j < 4; ++j) {
    EXPECT_FLOAT_EQ(table->value.f32()[3 * 4 + j], row3.f32()[j] - want[j]);
  }
}

TEST(PsClient, GathersUniqueRowsWithTheInverseIndex) {
  Cluster c = MakeCluster(2, kSgd1);
  auto rows = c.client->GatherRows("emb/embeddings", Tensor::FromInts({2, 2}, {3, 1, 3, 8}));
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(rows->unique_ids.shape(), (tensor::Shape{3}));
  EXPECT_EQ(rows->values.shape(), (tensor::Shape{3, 4}));
  EXPECT_EQ(rows->inverse.shape(), (tensor::Shape{2, 2}));
  EXPECT_EQ(std::vector<int64_t>(rows->inverse.i64(), rows->inverse.i64() + 4),
            (std::vector<int64_t>{1, 0, 1, 2}));
  const Tensor row8 =
      c.servers[0]->PullRows({"emb/embeddings", Tensor::FromInts({1}, {8})})->values;
  for (int j = 0; j < 4; ++j) EXPECT_EQ(rows->values.f32()[2 * 4 + j], row8.f32()[j]);
}

TEST(PsClient, SkipsDenseParametersAtAKnownVersion) {
  Cluster c = MakeCluster(2, kSgd1);
  auto params = c.worker.model->parameters();
  ASSERT_TRUE(c.client->PullDense(params).ok());
  nn::Parameter* bias = Find(*c.worker.model, "dense/bias");
  const float pulled = bias->value.f32()[0];
  bias->value.f32()[0] = 123;
  ASSERT_TRUE(c.client->PullDense(params).ok());
  EXPECT_EQ(bias->value.f32()[0], 123);  // nothing changed on the PS
  c.client->ForgetVersions();
  ASSERT_TRUE(c.client->PullDense(params).ok());
  EXPECT_EQ(bias->value.f32()[0], pulled);
}

TEST(PsClient, PushesWorkerStateButNotFrozenWeights) {
  for (bool frozen : {false, true}) {
    SCOPED_TRACE(frozen ? "frozen" : "state");
    Cluster c = MakeCluster(2, kSgd1);
    auto params = c.worker.model->parameters();
    ASSERT_TRUE(c.client->PullDense(params).ok());
    nn::Parameter* bias = Find(*c.worker.model, "dense/bias");
    const float original = bias->value.f32()[0];
    bias->trainable = false;  // a moving statistic, or a weight of a frozen layer
    bias->frozen = frozen;
    bias->value.f32()[0] = 123;
    SetGradients(*c.worker.model, 1);
    ASSERT_TRUE(c.client->PushGradients(params).ok());
    c.client->ForgetVersions();
    bias->value.f32()[0] = 0;
    ASSERT_TRUE(c.client->PullDense(params).ok());
    EXPECT_EQ(bias->value.f32()[0], frozen ? original : 123.f);
  }
}

TEST(PsClient, RejectsIdsOutsideTheWorkersTable) {
  Cluster c = MakeCluster(2, kSgd1);
  nn::Parameter* table = Find(*c.worker.model, "emb/embeddings");
  auto s = c.client->PullRows(*table, Tensor::FromInts({1}, {-2}));
  EXPECT_FALSE(s.ok());
  s = c.client->PullRows(*table, Tensor::FromInts({1}, {60}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("60"), std::string::npos) << s.message();
}

class FailingPs : public protocol::PsService {
 public:
  Result<protocol::PullDenseResponse> PullDense(const protocol::PullDenseRequest&) override {
    return Unavailable("connection refused");
  }
  Result<protocol::PullRowsResponse> PullRows(const protocol::PullRowsRequest&) override {
    return Unavailable("connection refused");
  }
  Result<protocol::PushGradientsResponse> PushGradients(
      const protocol::PushGradientsRequest&) override {
    return Unavailable("connection refused");
  }
};

TEST(PsClient, NamesTheFailingParameterServer) {
  auto good = MakePs(Shard(0, 2), kSgd1);
  FailingPs bad;
  PsClient client({good.get(), &bad});
  CompiledModel worker = MakeModel(kSgd1);
  Status s = client.PullDense(worker.model->parameters());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "PS 1: connection refused");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
}

// A PS whose pushes wait for the test to open a gate, and which records
// the order its calls arrive in.
class GatedPs : public protocol::PsService {
 public:
  explicit GatedPs(ParameterServer* real) : real_(real) {}

  Result<protocol::PullDenseResponse> PullDense(const protocol::PullDenseRequest& r) override {
    Record("pull");
    return real_->PullDense(r);
  }
  Result<protocol::PullRowsResponse> PullRows(const protocol::PullRowsRequest& r) override {
    Record("rows");
    return real_->PullRows(r);
  }
  Result<protocol::PushGradientsResponse> PushGradients(
      const protocol::PushGradientsRequest& r) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++pushes_arrived_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    Record("push");
    return real_->PushGradients(r);
  }

  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void WaitForPush() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return pushes_arrived_ > 0; });
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  void ForgetCalls() {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.clear();
  }

 private:
  void Record(const char* what) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(what);
  }

  ParameterServer* real_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int pushes_arrived_ = 0;
  std::vector<std::string> calls_;
};

TEST(PsClient, APullAfterAPushInFlightReachesThePsAfterItAndSeesIt) {
  auto real = MakePs(Shard(0, 1), kSgd1);
  GatedPs gated(real.get());
  PsClient client({&gated});
  CompiledModel worker = MakeModel(kSgd1);
  auto params = worker.model->parameters();
  ASSERT_TRUE(client.PullDense(params).ok());
  nn::Parameter* bias = Find(*worker.model, "dense/bias");
  const float before = bias->value.f32()[0];
  gated.ForgetCalls();

  SetGradients(*worker.model, 1);
  const float grad = bias->grad.f32()[0];
  client.StartPush(params, 7);
  for (auto* p : params) p->ZeroGrad();  // what the worker does next
  EXPECT_TRUE(client.push_in_flight());
  gated.WaitForPush();  // the push is at the PS, held there

  Status pulled;
  std::thread pull([&] { pulled = client.PullDense(params); });
  EXPECT_EQ(gated.calls(), std::vector<std::string>{});  // the pull waits its turn
  gated.Open();
  pull.join();
  ASSERT_TRUE(pulled.ok()) << pulled.message();
  EXPECT_EQ(gated.calls(), (std::vector<std::string>{"push", "pull"}));
  EXPECT_FLOAT_EQ(bias->value.f32()[0], before - grad);  // SGD, learning rate 1

  Result<PsClient::PushResult> finished = client.FinishPush();
  ASSERT_TRUE(finished.ok()) << finished.status().message();
  EXPECT_TRUE(finished->accepted);
  EXPECT_FALSE(client.push_in_flight());
}

TEST(PsClient, APushThatBringsThePullSavesTheRoundTripAndMatchesAPullAfterIt) {
  auto real = MakePs(Shard(0, 1), kSgd1);
  GatedPs gated(real.get());
  gated.Open();
  PsClient client({&gated});
  CompiledModel worker = MakeModel(kSgd1);
  auto params = worker.model->parameters();
  ASSERT_TRUE(client.PullDense(params).ok());
  gated.ForgetCalls();

  SetGradients(*worker.model, 2);
  client.StartPush(params, 7, /*with_dense_pull=*/true);
  for (auto* p : params) p->ZeroGrad();
  ASSERT_TRUE(client.PullDense(params).ok());
  EXPECT_EQ(gated.calls(), std::vector<std::string>{"push"});  // no PullDense call
  auto finished = client.FinishPush();
  ASSERT_TRUE(finished.ok()) << finished.status().message();

  // The same values and version as a pull of the PS now.
  auto truth = real->PullDense({});
  ASSERT_TRUE(truth.ok());
  EXPECT_EQ(client.versions()[0], truth->version);
  for (const NamedTensor& t : truth->params) {
    nn::Parameter* p = Find(*worker.model, t.name);
    ASSERT_NE(p, nullptr) << t.name;
    for (int64_t i = 0; i < t.value.numel(); ++i) {
      ASSERT_EQ(p->value.f32()[i], t.value.f32()[i]) << t.name << "[" << i << "]";
    }
  }
}

// A PS that is unreachable for its first `failures` pushes.
class FlakyPs : public protocol::PsService {
 public:
  FlakyPs(ParameterServer* real, int failures) : real_(real), failures_(failures) {}
  Result<protocol::PullDenseResponse> PullDense(const protocol::PullDenseRequest& r) override {
    return real_->PullDense(r);
  }
  Result<protocol::PullRowsResponse> PullRows(const protocol::PullRowsRequest& r) override {
    return real_->PullRows(r);
  }
  Result<protocol::PushGradientsResponse> PushGradients(
      const protocol::PushGradientsRequest& r) override {
    ++pushes;
    if (pushes <= failures_) return Unavailable("connection refused");
    return real_->PushGradients(r);
  }
  std::atomic<int> pushes{0};

 private:
  ParameterServer* real_;
  int failures_;
};

TEST(PsClient, AFailedPushIsResentOnlyToThePsThatDidNotAnswer) {
  auto ps0 = MakePs(Shard(0, 2), kSgd1);
  auto ps1 = MakePs(Shard(1, 2), kSgd1);
  FlakyPs steady(ps0.get(), 0), flaky(ps1.get(), 1);
  PsClient client({&steady, &flaky});
  CompiledModel worker = MakeModel(kSgd1);
  auto params = worker.model->parameters();
  ASSERT_TRUE(client.PullDense(params).ok());
  SetGradients(*worker.model, 1);
  client.StartPush(params);
  Result<PsClient::PushResult> first = client.FinishPush();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().message(), "PS 1: connection refused");
  EXPECT_TRUE(client.push_in_flight());
  Result<PsClient::PushResult> second = client.FinishPush();
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(steady.pushes.load(), 1);
  EXPECT_EQ(flaky.pushes.load(), 2);
  EXPECT_EQ(second->versions, (std::vector<int64_t>{1, 1}));
}

// A PS whose first push is applied but answered DeadlineExceeded (a slow
// PS): the push must not be sent again.
class SlowToAnswerPs : public FlakyPs {
 public:
  using FlakyPs::FlakyPs;
  Result<protocol::PushGradientsResponse> PushGradients(
      const protocol::PushGradientsRequest& r) override {
    auto applied = FlakyPs::PushGradients(r);
    if (pushes == 1) return DeadlineExceeded("no answer within 60000 ms");
    return applied;
  }
};

TEST(PsClient, APushThatMayHaveBeenAppliedIsNeverSentAgain) {
  auto ps0 = MakePs(Shard(0, 1), kSgd1);
  SlowToAnswerPs slow(ps0.get(), 0);
  PsClient client({&slow});
  CompiledModel worker = MakeModel(kSgd1);
  auto params = worker.model->parameters();
  ASSERT_TRUE(client.PullDense(params).ok());
  SetGradients(*worker.model, 1);
  client.StartPush(params, 3, /*with_dense_pull=*/true);
  Status pulled = client.PullDense(params);  // waits for the push's answer
  EXPECT_EQ(pulled.code(), StatusCode::kDeadlineExceeded) << pulled.message();
  for (int i = 0; i < 2; ++i) {
    auto finished = client.FinishPush();
    ASSERT_FALSE(finished.ok());
    EXPECT_EQ(finished.status().code(), StatusCode::kDeadlineExceeded);
  }
  EXPECT_EQ(slow.pushes.load(), 1);
  client.AbandonPush();
  EXPECT_FALSE(client.push_in_flight());
}

}  // namespace
}  // namespace edl::roles::ps
