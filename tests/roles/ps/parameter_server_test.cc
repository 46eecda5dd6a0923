#include "roles/ps/parameter_server.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "nn/optim/optimizer_from_json.h"
#include "ps_test_util.h"

namespace edl::roles::ps {
namespace {

using protocol::PullDenseRequest;
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

TEST(ParameterServer, KeepsOnlyItsPartitionOfTheDenseParameters) {
  auto ps0 = MakePs(Shard(0, 2), kSgd1);
  auto ps1 = MakePs(Shard(1, 2), kSgd1);
  EXPECT_EQ(ps0->DenseNames(), (std::vector<std::string>{"dense/kernel", "dense/bias"}));
  EXPECT_EQ(ps1->DenseNames(), (std::vector<std::string>{"hidden/kernel", "hidden/bias"}));
  EXPECT_EQ(ps0->NumRows("emb/embeddings"), 0);
  EXPECT_EQ(ps0->NumRows("dense/kernel"), -1);
}

TEST(ParameterServer, DenseUpdatesEqualTheLocalOptimizersMath) {
  for (const char* optimizer : {kSgd1, kAdam}) {
    auto ps = MakePs({}, optimizer, 7);
    CompiledModel local = MakeModel(optimizer, 7);
    auto pulled = Pull(*ps);
    ASSERT_EQ(pulled.size(), 4u);
    for (auto& [name, value] : pulled) {
      EXPECT_EQ(value.ToVector(), Find(*local.model, name)->value.ToVector()) << name;
    }
    for (int step = 0; step < 3; ++step) {
      PushGradientsRequest push;
      push.version = ps->version();
      std::vector<nn::Parameter*> params;
      for (const char* name : {"hidden/kernel", "dense/bias"}) {
        nn::Parameter* p = Find(*local.model, name);
        p->grad = Ramp(p->value.shape(), 0.1f * (step + 1), -0.03f);
        push.dense.push_back({name, p->grad});
        params.push_back(p);
      }
      local.optimizer->Apply(params);
      auto r = ps->PushGradients(push);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_TRUE(r->accepted);
      EXPECT_EQ(r->version, step + 1);
    }
    for (auto& [name, value] : Pull(*ps)) {
      EXPECT_EQ(value.ToVector(), Find(*local.model, name)->value.ToVector())
          << optimizer << " " << name;
    }
  }
}

TEST(ParameterServer, AnswersAPullAtTheKnownVersionWithoutParameters) {
  auto ps = MakePs({}, kSgd1);
  auto first = ps->PullDense({-1});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->version, 0);
  EXPECT_EQ(first->params.size(), 4u);
  auto again = ps->PullDense({0});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->params.empty());
}

// A 1024 x 1100 kernel (4.5 MB) is copied on the engine's threads: the pull
// holds the model's values and stays as it was when a push then moves them.
TEST(ParameterServer, ALargeDenseParameterIsPulledWhole) {
  CompiledModel local = testing::MakeModelOf(R"(
    {"class_name": "InputLayer", "config": {"name": "x", "batch_input_shape": [null, 1024]}},
    {"class_name": "Dense", "config": {"name": "wide", "units": 1100}})",
                                             kSgd1);
  const Tensor initial = Find(*local.model, "wide/kernel")->value.Clone();
  auto ps = ParameterServer::Create({}, testing::MakeModelOf(R"(
    {"class_name": "InputLayer", "config": {"name": "x", "batch_input_shape": [null, 1024]}},
    {"class_name": "Dense", "config": {"name": "wide", "units": 1100}})",
                                                             kSgd1));
  ASSERT_TRUE(ps.ok()) << ps.status().message();
  const Tensor pulled = Pull(**ps).at("wide/kernel");
  ASSERT_EQ(pulled.numel(), 1024 * 1100);
  EXPECT_EQ(pulled.ToVector(), initial.ToVector());
  PushGradientsRequest push;
  push.dense.push_back({"wide/kernel", Tensor::Full({1024, 1100}, 0.5f)});
  ASSERT_TRUE((*ps)->PushGradients(push).ok());
  EXPECT_EQ(pulled.ToVector(), initial.ToVector());
  const Tensor after = Pull(**ps).at("wide/kernel");
  for (int64_t i : {int64_t{0}, int64_t{555555}, int64_t{1024 * 1100 - 1}}) {
    EXPECT_FLOAT_EQ(after.f32()[i], initial.f32()[i] - 0.5f) << "element " << i;
  }
}

// A pull answers with the PS's own value, not a copy: a push that finds the
// value still held by an answer copies it first, so the answer keeps its
// version; one that finds it free writes it in place.
TEST(ParameterServer, APullSharesTheValueAndAPushCopiesItOnlyWhileItIsHeld) {
  auto ps = MakePs(Shard(1, 2), kSgd1);  // PS 1 of 2 holds hidden/*
  PushGradientsRequest push;
  push.dense.push_back({"hidden/bias", Tensor::Full({3}, 0.25f)});
  const Tensor held = Pull(*ps).at("hidden/bias");
  const std::vector<float> before = held.ToVector();
  EXPECT_TRUE(Pull(*ps).at("hidden/bias").SharesStorageWith(held)) << "a pull copied";
  ASSERT_TRUE(ps->PushGradients(push).ok());
  EXPECT_EQ(held.ToVector(), before) << "a push wrote into a held answer";
  Tensor after = Pull(*ps).at("hidden/bias");
  EXPECT_FALSE(after.SharesStorageWith(held));
  EXPECT_FLOAT_EQ(after.ToVector()[0], before[0] - 0.25f);
  // Nothing holds the new value but `after`'s address: the next push
  // writes in place, so a pull after it finds the same storage.
  const void* storage = after.raw_data();
  after = Tensor();
  ASSERT_TRUE(ps->PushGradients(push).ok());
  const Tensor again = Pull(*ps).at("hidden/bias");
  EXPECT_EQ(again.raw_data(), storage) << "a push copied a value no answer held";
  EXPECT_FLOAT_EQ(again.ToVector()[0], before[0] - 0.5f);
}

// Worker state replaces the PS's value the same way: a held answer keeps
// what it was given.
TEST(ParameterServer, StateAPushCarriesLeavesAHeldPullAsItWas) {
  CompiledModel local = testing::MakeModelOf(R"(
    {"class_name": "InputLayer", "config": {"name": "x", "batch_input_shape": [null, 4]}},
    {"class_name": "BatchNormalization", "config": {"name": "bn"}})",
                                             kSgd1);
  auto ps = ParameterServer::Create({}, std::move(local));
  ASSERT_TRUE(ps.ok()) << ps.status().message();
  const Tensor held = Pull(**ps).at("bn/moving_mean");
  const std::vector<float> before = held.ToVector();
  PushGradientsRequest push;
  push.state.push_back({"bn/moving_mean", Tensor::Full({4}, 7.f)});
  ASSERT_TRUE((*ps)->PushGradients(push).ok());
  EXPECT_EQ(held.ToVector(), before);
  EXPECT_EQ(Pull(**ps).at("bn/moving_mean").ToVector(), std::vector<float>(4, 7.f));
}

TEST(ParameterServer, SyncModeAveragesGradsToWaitPushesAndRejectsStaleOnes) {
  ParameterServerOptions options;
  options.use_async = false;
  options.grads_to_wait = 2;
  auto ps = MakePs(options, kSgd1);
  const Tensor before = Pull(*ps)["dense/bias"];
  const Tensor row_before = Rows(*ps, "emb/embeddings", {1});
  PushGradientsRequest a, b;
  a.dense.push_back({"dense/bias", Tensor::FromVector({2}, {1, 2})});
  a.sparse.push_back({"emb/embeddings", Tensor::FromInts({1}, {1}), Tensor::Full({1, 4}, 4)});
  b.dense.push_back({"dense/bias", Tensor::FromVector({2}, {3, 6})});
  auto ra = ps->PushGradients(a);
  ASSERT_TRUE(ra.ok());
  EXPECT_TRUE(ra->accepted);
  EXPECT_EQ(ra->version, 0);
  EXPECT_EQ(Pull(*ps)["dense/bias"].ToVector(), before.ToVector());
  auto rb = ps->PushGradients(b);
  ASSERT_TRUE(rb.ok());
  EXPECT_EQ(rb->version, 1);
  const Tensor after = Pull(*ps)["dense/bias"];
  EXPECT_FLOAT_EQ(after.f32()[0], before.f32()[0] - 2);
  EXPECT_FLOAT_EQ(after.f32()[1], before.f32()[1] - 4);
  EXPECT_FLOAT_EQ(Rows(*ps, "emb/embeddings", {1}).f32()[0], row_before.f32()[0] - 2);
  // Computed on version 0, now 1, tolerance 0: rejected, nothing changes.
  auto stale = ps->PushGradients(a);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->accepted);
  EXPECT_EQ(stale->version, 1);
  PushGradientsRequest fresh = b;
  fresh.version = 1;
  ASSERT_TRUE(ps->PushGradients(fresh)->accepted);
  EXPECT_EQ(Pull(*ps)["dense/bias"].ToVector(), after.ToVector());
}

TEST(ParameterServer, AppliesANamedMinibatchOnceAndAnswersRepeatsWithWhatItTook) {
  auto ps = MakePs({}, kSgd1);
  const Tensor before = Pull(*ps)["dense/bias"];
  const Tensor row_before = Rows(*ps, "emb/embeddings", {1});
  PushGradientsRequest push;
  push.task_id = 42;
  push.dense.push_back({"dense/bias", Tensor::FromVector({2}, {1, 2})});
  push.sparse.push_back({"emb/embeddings", Tensor::FromInts({1}, {1}), Tensor::Full({1, 4}, 4)});
  struct Step {
    int64_t minibatch;
    bool duplicate;
    int64_t version;  // after it
  };
  // The last two: a retried task's repeats.
  for (const Step& step :
       {Step{0, false, 1}, Step{1, false, 2}, Step{0, true, 2}, Step{1, true, 2}}) {
    push.minibatch = step.minibatch;
    auto r = ps->PushGradients(push);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->accepted);
    EXPECT_EQ(r->duplicate, step.duplicate) << step.minibatch;
    EXPECT_EQ(r->version, step.version) << step.minibatch;
    EXPECT_EQ(r->task_taken, step.version) << step.minibatch;  // one task: taken = updates
  }
  const Tensor after = Pull(*ps)["dense/bias"];
  EXPECT_FLOAT_EQ(after.f32()[0], before.f32()[0] - 2);
  EXPECT_FLOAT_EQ(after.f32()[1], before.f32()[1] - 4);
  EXPECT_FLOAT_EQ(Rows(*ps, "emb/embeddings", {1}).f32()[0], row_before.f32()[0] - 8);
  // Settled once its report is durable: a late push for it (a hung worker
  // waking up) is refused as taken. Unnamed pushes always apply.
  PushGradientsRequest unnamed;
  unnamed.settled_task = 42;
  ASSERT_TRUE(ps->PushGradients(unnamed).ok());
  EXPECT_EQ(ps->applied_pushes().tasks_in_flight(), 0u);
  push.minibatch = 2;
  auto late = ps->PushGradients(push);
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(late->duplicate);
  EXPECT_EQ(late->task_taken, AppliedPushes::kSettled);
  EXPECT_EQ(ps->version(), 3);
  ASSERT_TRUE(ps->PushGradients(unnamed).ok());
  EXPECT_EQ(ps->version(), 4);
}

TEST(ParameterServer, SyncModeDropsAStaleNamedPushAsBeforeAndTheTaskGoesOn) {
  ParameterServerOptions options;
  options.use_async = false;
  options.grads_to_wait = 1;
  auto ps = MakePs(options, kSgd1);
  PushGradientsRequest push;
  push.task_id = 9;
  push.dense.push_back({"dense/bias", Tensor::FromVector({2}, {1, 2})});
  ASSERT_TRUE(ps->PushGradients(push)->accepted);  // version 0 -> 1
  // Minibatch 1 computed on version 0: too stale, refused and dropped; the
  // task's next minibatch is not behind.
  push.minibatch = 1;
  auto stale = ps->PushGradients(push);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->accepted);
  EXPECT_FALSE(stale->duplicate);
  EXPECT_EQ(stale->task_taken, 2);
  EXPECT_EQ(ps->version(), 1);
  push.version = 1;
  push.minibatch = 2;
  auto fresh = ps->PushGradients(push);
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->accepted);
  EXPECT_FALSE(fresh->behind);
  EXPECT_EQ(fresh->task_taken, 3);
  EXPECT_EQ(ps->version(), 2);
}

TEST(ParameterServer, APushAskingForThePullIsAnsweredWithTheParametersAfterIt) {
  for (bool async : {true, false}) {
    SCOPED_TRACE(async ? "async" : "sync, refused as stale");
    ParameterServerOptions options;
    options.use_async = async;
    auto ps = MakePs(options, kSgd1);
    PushGradientsRequest r;
    r.version = async ? 0 : -5;  // sync: too stale, refused, still answered
    r.dense.push_back({"dense/bias", Tensor::FromVector({2}, {1, 2})});
    r.pull_dense = true;
    auto answer = ps->PushGradients(r);
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    EXPECT_EQ(answer->accepted, async);
    auto pulled = ps->PullDense(PullDenseRequest{});
    ASSERT_TRUE(pulled.ok());
    EXPECT_EQ(answer->params_version, pulled->version);
    ASSERT_EQ(answer->params.size(), pulled->params.size());
    for (size_t i = 0; i < pulled->params.size(); ++i) {
      EXPECT_EQ(answer->params[i].name, pulled->params[i].name);
      EXPECT_EQ(answer->params[i].value.ToVector(), pulled->params[i].value.ToVector());
    }
    // Without pull_dense nothing comes back.
    r.pull_dense = false;
    EXPECT_TRUE(ps->PushGradients(r)->params.empty());
  }
}

TEST(ParameterServer, SyncModeAcceptsPushesWithinTheTolerance) {
  ParameterServerOptions options;
  options.use_async = false;
  options.grads_to_wait = 1;
  options.sync_version_tolerance = 1;
  auto ps = MakePs(options, kSgd1);
  PushGradientsRequest push;
  ASSERT_TRUE(ps->PushGradients(push)->accepted);   // version 0 -> 1
  EXPECT_TRUE(ps->PushGradients(push)->accepted);   // 0 >= 1 - 1
  EXPECT_FALSE(ps->PushGradients(push)->accepted);  // 0 < 2 - 1
}

TEST(ParameterServer, AsyncStalenessModulationScalesTheStep) {
  ParameterServerOptions options;
  options.lr_staleness_modulation = true;
  auto ps = MakePs(options, kSgd1);
  PushGradientsRequest empty;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ps->PushGradients(empty).ok());
  ASSERT_EQ(ps->version(), 3);
  const Tensor before = Pull(*ps)["dense/bias"];
  PushGradientsRequest push;
  push.version = 1;  // two versions stale: half the step
  push.dense.push_back({"dense/bias", Tensor::FromVector({2}, {1, 2})});
  ASSERT_TRUE(ps->PushGradients(push).ok());
  Tensor after = Pull(*ps)["dense/bias"];
  EXPECT_FLOAT_EQ(after.f32()[0], before.f32()[0] - 0.5f);
  EXPECT_FLOAT_EQ(after.f32()[1], before.f32()[1] - 1.0f);
  push.version = 4;  // fresh: the full step
  ASSERT_TRUE(ps->PushGradients(push).ok());
  EXPECT_FLOAT_EQ(Pull(*ps)["dense/bias"].f32()[0], after.f32()[0] - 1);
}

TEST(ParameterServer, LosesNoUpdateUnderConcurrentPushes) {
  auto ps = MakePs({}, kSgd1);
  const Tensor before = Pull(*ps)["dense/kernel"];
  const Tensor row_before = Rows(*ps, "emb/embeddings", {2, 5});
  constexpr int kThreads = 4, kPushes = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPushes; ++i) {
        PushGradientsRequest push;
        push.dense.push_back({"dense/kernel", Tensor::Full(before.shape(), 1)});
        push.sparse.push_back(
            {"emb/embeddings", Tensor::FromInts({3}, {2, 5, 2}), Tensor::Full({3, 4}, 1)});
        EXPECT_TRUE(ps->PushGradients(push).ok());
        EXPECT_TRUE(ps->PullDense({}).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ps->version(), kThreads * kPushes);
  const Tensor after = Pull(*ps)["dense/kernel"];
  for (int64_t i = 0; i < after.numel(); ++i) {
    EXPECT_FLOAT_EQ(after.f32()[i], before.f32()[i] - kThreads * kPushes);
  }
  const Tensor rows = Rows(*ps, "emb/embeddings", {2, 5});
  EXPECT_FLOAT_EQ(rows.f32()[0], row_before.f32()[0] - 2 * kThreads * kPushes);
  EXPECT_FLOAT_EQ(rows.f32()[4], row_before.f32()[4] - kThreads * kPushes);
}

TEST(ParameterServer, RejectsGradientsItDoesNotHoldAndAppliesNothing) {
  auto ps = MakePs(Shard(0, 2), kSgd1);
  const Tensor before = Pull(*ps)["dense/bias"];
  PushGradientsRequest push;
  push.dense.push_back({"dense/bias", Tensor::FromVector({2}, {1, 1})});
  push.dense.push_back({"hidden/bias", Tensor::Zeros({3})});
  auto r = ps->PushGradients(push);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("PS 0 of 2: gradient for \"hidden/bias\""), std::string::npos)
      << r.status().message();
  EXPECT_EQ(Pull(*ps)["dense/bias"].ToVector(), before.ToVector());
  EXPECT_EQ(ps->version(), 0);

  PushGradientsRequest bad_shape;
  bad_shape.dense.push_back({"dense/bias", Tensor::Zeros({3})});
  EXPECT_FALSE(ps->PushGradients(bad_shape).ok());
  PushGradientsRequest foreign_row;
  foreign_row.sparse.push_back(
      {"emb/embeddings", Tensor::FromInts({1}, {3}), Tensor::Zeros({1, 4})});
  auto fr = ps->PushGradients(foreign_row);
  ASSERT_FALSE(fr.ok());
  EXPECT_NE(fr.status().message().find("row 3"), std::string::npos);
  PushGradientsRequest unknown;
  unknown.sparse.push_back({"nope/embeddings", Tensor::FromInts({1}, {2}), Tensor::Zeros({1, 4})});
  EXPECT_FALSE(ps->PushGradients(unknown).ok());
}

TEST(ParameterServer, RejectsRowRequestsForIdsItDoesNotOwn) {
  auto ps = MakePs(Shard(1, 2), kSgd1);
  EXPECT_FALSE(ps->PullRows({"emb/embeddings", Tensor::FromInts({1}, {4})}).ok());
  EXPECT_FALSE(ps->PullRows({"emb/embeddings", Tensor::FromInts({1}, {51})}).ok());
  EXPECT_FALSE(ps->PullRows({"emb/embeddings", Tensor::FromVector({1}, {1})}).ok());
  auto missing = ps->PullRows({"other/embeddings", Tensor::FromInts({1}, {1})});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("other/embeddings"), std::string::npos);
}

TEST(ParameterServer, RejectsAnIndexOutsideThePsCount) {
  auto ps = ParameterServer::Create(Shard(2, 2), MakeModel(kSgd1));
  ASSERT_FALSE(ps.ok());
  EXPECT_NE(ps.status().message().find("index 2 of 2"), std::string::npos);
}

}  // namespace
}  // namespace edl::roles::ps
