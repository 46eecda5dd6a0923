// ParameterServer's embedding rows: how they are created and initialized,
// pulled in large requests, and updated by sparse pushes (repeats, order,
// the optimizer's per-row state). The dense parameters, sync mode and
// errors are in parameter_server_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "nn/optim/optimizer_from_json.h"
#include "ps_test_util.h"
#include "roles/ps/parameter_server.h"

namespace edl::roles::ps {
namespace {

using protocol::PullRowsRequest;
using protocol::PushGradientsRequest;
using protocol::SparseGradient;
using tensor::DType;
using tensor::Tensor;
using testing::Find;
using testing::kAdam;
using testing::kSgd1;
using testing::MakeModel;
using testing::MakePs;
using testing::Pull;
using testing::Ramp;
using testing::Rows;
using testing::Shard;

TEST(ParameterServer, CreatesEmbeddingRowsDeterministicallyWhateverTheAccessOrder) {
  auto a = MakePs({}, kSgd1);
  auto b = MakePs({}, kSgd1);
  Tensor forward = Rows(*a, "emb/embeddings", {3, 7, 10});
  Tensor backward = Rows(*b, "emb/embeddings", {10, 7, 3});
  EXPECT_EQ(a->NumRows("emb/embeddings"), 3);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(forward.f32()[j], backward.f32()[8 + j]);
    EXPECT_EQ(forward.f32()[8 + j], backward.f32()[j]);
  }
  // Keras' default: uniform in [-0.05, 0.05], rows differ.
  for (float x : forward.ToVector()) EXPECT_LE(std::abs(x), 0.05f);
  EXPECT_NE(forward.f32()[0], forward.f32()[4]);
  // On the PS that owns it in a 2-PS job, row 7 is the same.
  auto ps1 = MakePs(Shard(1, 2), kSgd1);
  Tensor row7 = Rows(*ps1, "emb/embeddings", {7});
  for (int j = 0; j < 4; ++j) EXPECT_EQ(row7.f32()[j], forward.f32()[4 + j]);
  // A different job seed gives different rows.
  ParameterServerOptions other;
  other.seed = 99;
  auto c = MakePs(other, kSgd1);
  EXPECT_NE(Rows(*c, "emb/embeddings", {3}).f32()[0], forward.f32()[0]);
}

TEST(ParameterServer, InitializesRowsWithTheLayersInitializerOverTheWholeTablesFans) {
  ParameterServerOptions options;
  auto ones = ParameterServer::Create(options, MakeModel(kSgd1, 1, "\"ones\""));
  ASSERT_TRUE(ones.ok());
  EXPECT_EQ(Rows(**ones, "emb/embeddings", {5}).ToVector(), (std::vector<float>{1, 1, 1, 1}));
  // glorot_uniform over [50, 4]: limit sqrt(6 / 54) = 0.333.
  auto glorot = ParameterServer::Create(options, MakeModel(kSgd1, 1, "\"glorot_uniform\""));
  ASSERT_TRUE(glorot.ok());
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 50; ++i) ids.push_back(i);
  float max_abs = 0;
  for (float x : Rows(**glorot, "emb/embeddings", ids).ToVector()) {
    max_abs = std::max(max_abs, std::abs(x));
  }
  EXPECT_LE(max_abs, 0.3334f);
  EXPECT_GT(max_abs, 0.25f);
}

// Every row draws from its own stream, yet together 20,000 rows of a
// 100,000 x 16 glorot_uniform table have the whole table's Keras
// distribution: uniform within sqrt(6 / (100000 + 16)), that stddev / sqrt(3).
TEST(ParameterServer, RowsTogetherHaveTheWholeTablesDistribution) {
  auto ps = ParameterServer::Create({}, testing::MakeModelOf(R"(
    {"class_name": "InputLayer", "config": {"name": "ids", "batch_input_shape": [null, 3], "dtype": "int32"}},
    {"class_name": "Embedding", "config": {"name": "emb", "input_dim": 100000, "output_dim": 16,
       "embeddings_initializer": "glorot_uniform"}},
    {"class_name": "Flatten", "config": {"name": "flat"}})",
                                                             kSgd1));
  ASSERT_TRUE(ps.ok()) << ps.status().message();
  std::vector<int64_t> ids(20000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i * 5);
  const Tensor rows = Rows(**ps, "emb/embeddings", ids);
  const double limit = std::sqrt(6.0 / 100016);
  double sum = 0, sum2 = 0, hi = 0;
  for (float v : rows.ToVector()) {
    ASSERT_LE(std::abs(v), limit);
    sum += v;
    sum2 += double(v) * v;
    hi = std::max(hi, double(std::abs(v)));
  }
  const double n = static_cast<double>(rows.numel());
  EXPECT_NEAR(sum / n, 0.0, 0.01 * limit);
  EXPECT_NEAR(std::sqrt(sum2 / n), limit / std::sqrt(3.0), 0.01 * limit);
  EXPECT_GT(hi, 0.999 * limit);
  // Every row is its own draw: no two of them are equal.
  std::set<std::vector<float>> distinct;
  for (size_t i = 0; i < ids.size(); ++i) {
    distinct.emplace(rows.f32() + i * 16, rows.f32() + (i + 1) * 16);
  }
  EXPECT_EQ(distinct.size(), ids.size());
}

TEST(ParameterServer, CanStartItsRowsFromTheModelsTable) {
  CompiledModel local = MakeModel(kSgd1);
  ParameterServerOptions options = Shard(1, 2);
  options.tables_from_model = true;
  auto ps = ParameterServer::Create(options, MakeModel(kSgd1));
  ASSERT_TRUE(ps.ok()) << ps.status().message();
  EXPECT_EQ((*ps)->NumRows("emb/embeddings"), 25);
  const Tensor& table = Find(*local.model, "emb/embeddings")->value;
  const Tensor row = Rows(**ps, "emb/embeddings", {7});
  for (int j = 0; j < 4; ++j) EXPECT_EQ(row.f32()[j], table.f32()[7 * 4 + j]);
}

TEST(ParameterServer, SumsRepeatedIdsOfASparsePush) {
  auto ps = MakePs({}, kSgd1);
  Tensor before = Rows(*ps, "emb/embeddings", {4, 6});
  PushGradientsRequest push;
  push.sparse.push_back(
      {"emb/embeddings", Tensor::FromInts({3}, {4, 6, 4}),
       Tensor::FromVector({3, 4}, {1, 2, 3, 4, 10, 10, 10, 10, 0.5f, 0.5f, 0.5f, 0.5f})});
  ASSERT_TRUE(ps->PushGradients(push).ok());
  Tensor after = Rows(*ps, "emb/embeddings", {4, 6});
  const float want4[] = {1.5f, 2.5f, 3.5f, 4.5f};
  for (int j = 0; j < 4; ++j) {
    EXPECT_FLOAT_EQ(after.f32()[j], before.f32()[j] - want4[j]);
    EXPECT_FLOAT_EQ(after.f32()[4 + j], before.f32()[4 + j] - 10);
  }
}

// A model whose only table, "emb/embeddings", has 50 rows of `dim` columns.
CompiledModel TableModel(int dim) {
  return testing::MakeModelOf(R"(
    {"class_name": "InputLayer", "config": {"name": "ids", "batch_input_shape": [null, 3], "dtype": "int32"}},
    {"class_name": "Embedding", "config": {"name": "emb", "input_dim": 50, "output_dim": )" +
                                  std::to_string(dim) + R"(}},
    {"class_name": "Flatten", "config": {"name": "flat"}})",
                              kSgd1);
}

// 20000 ids over 50 rows: enough values that the table splits the work
// across the engine's threads, with repeats; rows of 4 floats are copied
// plainly, rows of 16 with streaming stores. The PS starts from the model's
// table, which the test reads directly.
TEST(ParameterServer, ALargeRequestWithRepeatsGetsEveryRowRight) {
  for (int dim : {4, 16}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    CompiledModel local = TableModel(dim);
    const Tensor table = Find(*local.model, "emb/embeddings")->value.Clone();
    ParameterServerOptions options;
    options.tables_from_model = true;
    auto ps = ParameterServer::Create(options, TableModel(dim));
    ASSERT_TRUE(ps.ok()) << ps.status().message();
    std::vector<int64_t> ids(20000);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7919 + i / 3) % 50);
    const Tensor all = Rows(**ps, "emb/embeddings", ids);
    for (size_t i = 0; i < ids.size(); ++i) {
      for (int j = 0; j < dim; ++j) {
        ASSERT_EQ(all.f32()[i * dim + j], table.f32()[ids[i] * dim + j])
            << "position " << i << " (id " << ids[i] << ") column " << j;
      }
    }
    // A push of the same ids sums each id's gradients (which differ by
    // position and column) into one SGD(1) step per row.
    Tensor grad = Tensor::Empty({int64_t(ids.size()), dim});
    std::vector<double> want(50 * dim);
    for (int64_t id = 0; id < 50; ++id) {
      for (int j = 0; j < dim; ++j) want[id * dim + j] = table.f32()[id * dim + j];
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      for (int j = 0; j < dim; ++j) {
        const float g = 0.0001f * static_cast<float>((i % 7) + 1) * static_cast<float>(j + 1);
        grad.f32()[i * dim + j] = g;
        want[ids[i] * dim + j] -= g;
      }
    }
    PushGradientsRequest push;
    push.sparse.push_back(
        {"emb/embeddings", Tensor::FromInts({int64_t(ids.size())}, ids), std::move(grad)});
    ASSERT_TRUE((*ps)->PushGradients(push).ok());
    std::vector<int64_t> every(50);
    std::iota(every.begin(), every.end(), 0);
    const Tensor after = Rows(**ps, "emb/embeddings", every);
    for (int64_t id = 0; id < 50; ++id) {
      for (int j = 0; j < dim; ++j) {
        EXPECT_NEAR(after.f32()[id * dim + j], want[id * dim + j], 2e-4)
            << "id " << id << " column " << j;
      }
    }
  }
}

// Rows created during a large request (a fresh table, every id new) are
// what a one-row request creates.
TEST(ParameterServer, RowsCreatedByALargeRequestEqualThoseOfOneRowAtATime) {
  auto big = MakePs({}, kSgd1);
  auto small = MakePs({}, kSgd1);
  std::vector<int64_t> ids(20000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7919 + i / 3) % 50);
  const Tensor all = Rows(*big, "emb/embeddings", ids);
  EXPECT_EQ(big->NumRows("emb/embeddings"), 50);
  for (size_t i = 0; i < ids.size(); i += 997) {
    const Tensor one = Rows(*small, "emb/embeddings", {ids[i]});
    for (int j = 0; j < 4; ++j) ASSERT_EQ(all.f32()[i * 4 + j], one.f32()[j]) << "id " << ids[i];
  }
}

// Adam keeps per-row state, so repeats must be one step per row: a push of
// unsorted, repeated ids equals a push of each id once with its summed
// gradient.
TEST(ParameterServer, RepeatedUnsortedIdsAreOneAdamStepPerRow) {
  auto repeated = MakePs({}, kAdam);
  auto summed = MakePs({}, kAdam);
  const std::vector<float> g7a{1, 2, 3, 4}, g3a{-1, 0.5f, 2, 0}, g7b{0.25f, -2, 1, 1},
      g3b{3, 3, -3, 1}, g9{0.5f, 0.5f, 0.5f, 0.5f};
  std::vector<float> grads;
  for (const auto* g : {&g7a, &g3a, &g7b, &g3b, &g9})
    grads.insert(grads.end(), g->begin(), g->end());
  PushGradientsRequest a;
  a.sparse.push_back({"emb/embeddings", Tensor::FromInts({5}, {7, 3, 7, 3, 9}),
                      Tensor::FromVector({5, 4}, grads)});
  std::vector<float> sums;
  for (int j = 0; j < 4; ++j) sums.push_back(g3a[j] + g3b[j]);
  for (int j = 0; j < 4; ++j) sums.push_back(g7a[j] + g7b[j]);
  sums.insert(sums.end(), g9.begin(), g9.end());
  PushGradientsRequest b;
  b.sparse.push_back(
      {"emb/embeddings", Tensor::FromInts({3}, {3, 7, 9}), Tensor::FromVector({3, 4}, sums)});
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(repeated->PushGradients(a).ok());
    ASSERT_TRUE(summed->PushGradients(b).ok());
  }
  EXPECT_EQ(Rows(*repeated, "emb/embeddings", {3, 7, 9}).ToVector(),
            Rows(*summed, "emb/embeddings", {3, 7, 9}).ToVector());
  EXPECT_NE(Rows(*repeated, "emb/embeddings", {3}).ToVector(),
            Rows(*MakePs({}, kAdam), "emb/embeddings", {3}).ToVector());
}

// The same over a table large enough that each shard's rows take more than
// one pass of the PS's radix sort (2048 rows), pushed in scrambled order
// with repeats: every row gets one Adam step of its gradients summed in
// position order.
TEST(ParameterServer, AScrambledPushOverManyRowsIsOneAdamStepPerRow) {
  constexpr int64_t kVocab = 100000, kDim = 4;
  const std::string layers = R"(
    {"class_name": "InputLayer", "config": {"name": "ids", "batch_input_shape": [null, 1], "dtype": "int32"}},
    {"class_name": "Embedding", "config": {"name": "emb", "input_dim": 100000, "output_dim": 4}},
    {"class_name": "Flatten", "config": {"name": "flat"}})";
  auto repeated = ParameterServer::Create({}, testing::MakeModelOf(layers, kAdam));
  auto summed = ParameterServer::Create({}, testing::MakeModelOf(layers, kAdam));
  ASSERT_TRUE(repeated.ok() && summed.ok());
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 50000; ++i) ids.push_back(i * 7919 % kVocab);
  for (int64_t i = 0; i < 10000; ++i) ids.push_back(ids[i * 13 % 50000]);
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<float> grads(n * kDim);
  std::map<int64_t, std::vector<float>> sums;  // in position order, as the PS sums
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float>& sum = sums[ids[i]];
    const bool first = sum.empty();
    sum.resize(kDim);
    for (int64_t j = 0; j < kDim; ++j) {
      const float g =
          0.001f * static_cast<float>(i % 11 + 1) * static_cast<float>(j % 2 ? -1 : j + 1);
      grads[i * kDim + j] = g;
      sum[j] = first ? g : sum[j] + g;
    }
  }
  std::vector<int64_t> unique_ids;
  std::vector<float> summed_grads;
  for (const auto& [id, sum] : sums) {
    unique_ids.push_back(id);
    summed_grads.insert(summed_grads.end(), sum.begin(), sum.end());
  }
  const int64_t u = static_cast<int64_t>(unique_ids.size());
  PushGradientsRequest a;
  a.sparse.push_back(
      {"emb/embeddings", Tensor::FromInts({n}, ids), Tensor::FromVector({n, kDim}, grads)});
  PushGradientsRequest b;
  b.sparse.push_back({"emb/embeddings", Tensor::FromInts({u}, unique_ids),
                      Tensor::FromVector({u, kDim}, summed_grads)});
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE((*repeated)->PushGradients(a).ok());
    ASSERT_TRUE((*summed)->PushGradients(b).ok());
  }
  const Tensor got = Rows(**repeated, "emb/embeddings", unique_ids);
  const Tensor want = Rows(**summed, "emb/embeddings", unique_ids);
  for (int64_t k = 0; k < u * kDim; ++k) {
    ASSERT_EQ(got.f32()[k], want.f32()[k])
        << "id " << unique_ids[k / kDim] << " column " << k % kDim;
  }
  const Tensor fresh = Rows(**ParameterServer::Create({}, testing::MakeModelOf(layers, kAdam)),
                            "emb/embeddings", unique_ids);
  EXPECT_NE(got.ToVector(), fresh.ToVector());
}

// ElasticDL's PS gave lazily created rows wrongly initialized slots; here a
// new row's update equals the dense optimizer's first step on that row,
// also across the row store growing between updates.
TEST(ParameterServer, UpdatesNewRowsLikeTheDenseOptimizerWithFreshSlots) {
  const std::string adagrad =
      R"({"class_name": "Adagrad", "config": {"learning_rate": 0.1, "initial_accumulator_value": 0.5}})";
  for (const std::string& optimizer : {adagrad, std::string(kAdam)}) {
    auto ps = MakePs({}, optimizer);
    auto local = nn::optim::OptimizerFromJson(optimizer, "test");
    ASSERT_TRUE(local.ok());
    Tensor row = Rows(*ps, "emb/embeddings", {9});
    for (int step = 0; step < 3; ++step) {
      // Touch many other rows so the shard's store grows between steps.
      std::vector<int64_t> ids{9};
      for (int64_t i = 10; i < 10 + 13 * (step + 1); ++i) ids.push_back(i);
      const int64_t n = static_cast<int64_t>(ids.size());
      Tensor grad = Ramp({n, 4}, 0.2f + step, 0.01f);
      PushGradientsRequest push;
      push.sparse.push_back({"emb/embeddings", Tensor::FromInts({n}, ids), grad});
      ASSERT_TRUE(ps->PushGradients(push).ok());
      (*local)->ApplyDense("row", row, grad.Slice(0, 1));
      (*local)->FinishStep();
    }
    EXPECT_EQ(Rows(*ps, "emb/embeddings", {9}).ToVector(), row.ToVector()) << optimizer;
  }
}

}  // namespace
}  // namespace edl::roles::ps
