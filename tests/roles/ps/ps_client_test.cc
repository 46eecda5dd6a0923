#include "roles/ps/ps_client.h"

#include <gtest/gtest.h>

#include "roles/ps/parameter_server.h"
#include "ps_test_util.h"

namespace edl::roles::ps {
namespace {

using tensor::Tensor;
using testing::Find;
using testing::MakeModel;
using testing::MakePs;
using testing::Shard;

constexpr char kAdam[] = R"({"class_name": "Adam", "config": {"learning_rate": 0.01}})";
constexpr char kSgd1[] = R"({"class_name": "SGD", "config": {"learning_rate": 1.0}})";

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
          Tensor::FromVector({4, 4}, {1, 2, 3, 4, 0.5f, 0.5f, 0.5f, 0.5f,
                                      -1, 0, 1, float(k), 2, 2, 2, 2}),
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
    EXPECT_EQ(p->value.ToVector(), Find(*one.worker.model, p->name)->value.ToVector())
        << p->name;
  }
  EXPECT_EQ(two.client->versions(), (std::vector<int64_t>{3, 3}));
}

TEST(PsClient, SumsRepeatedIdsAndWritesPulledRowsIntoTheWorkersTable) {
  Cluster c = MakeCluster(2, kSgd1);
  nn::Parameter* table = Find(*c.worker.model, "emb/embeddings");
  const Tensor ids = Tensor::FromInts({2}, {3, 8});
  ASSERT_TRUE(c.client->PullRows(*table, ids).ok());
  const Tensor row3 = c.servers[1]->PullRows({"emb/embeddings", Tensor::FromInts({1}, {3})})->values;
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
  auto rows = c.client->GatherRows("emb/embeddings",
                                   Tensor::FromInts({2, 2}, {3, 1, 3, 8}));
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(rows->unique_ids.shape(), (tensor::Shape{3}));
  EXPECT_EQ(rows->values.shape(), (tensor::Shape{3, 4}));
  EXPECT_EQ(rows->inverse.shape(), (tensor::Shape{2, 2}));
  EXPECT_EQ(std::vector<int64_t>(rows->inverse.i64(), rows->inverse.i64() + 4),
            (std::vector<int64_t>{1, 0, 1, 2}));
  const Tensor row8 = c.servers[0]->PullRows({"emb/embeddings", Tensor::FromInts({1}, {8})})->values;
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

}  // namespace
}  // namespace edl::roles::ps
