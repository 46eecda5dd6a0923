// Optimizer bookkeeping: Apply over Parameters, step counting, slots for
// checkpoints, learning-rate decay and gradient clipping.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "nn/autograd.h"
#include "nn/optim/adam.h"
#include "nn/optim/nadam.h"
#include "nn/optim/rmsprop.h"
#include "nn/optim/sgd.h"

namespace edl::nn::optim {
namespace {

using tensor::Tensor;

Parameter MakeParameter(const std::string& name, std::vector<float> value) {
  Parameter p;
  p.name = name;
  const int64_t n = static_cast<int64_t>(value.size());
  p.value = Tensor::FromVector({n}, value);
  return p;
}

TEST(OptimizerApply, UpdatesTrainableParametersAndCountsOneStep) {
  Sgd opt({.learning_rate = 0.5});
  Parameter a = MakeParameter("a", {1.f, 2.f});
  a.grad = Tensor::FromVector({2}, {1.f, -1.f});
  Parameter frozen = MakeParameter("frozen", {3.f});
  frozen.trainable = false;
  frozen.grad = Tensor::FromVector({1}, {1.f});
  Parameter no_grad = MakeParameter("no_grad", {4.f});
  opt.Apply({&a, &frozen, &no_grad});
  EXPECT_EQ(a.value.ToVector(), (std::vector<float>{0.5f, 2.5f}));
  EXPECT_EQ(frozen.value.ToVector(), std::vector<float>{3.f});
  EXPECT_EQ(no_grad.value.ToVector(), std::vector<float>{4.f});
  EXPECT_EQ(opt.iterations(), 1);
}

TEST(OptimizerApply, UpdatesTablesFromSparseGradients) {
  Sgd opt({.learning_rate = 1.0});
  Parameter table;
  table.name = "embedding";
  table.value = Tensor::Zeros({3, 2});
  tensor::SparseRows rows;
  rows.ids = Tensor::FromInts({2}, {2, 2});
  rows.values = Tensor::FromVector({2, 2}, {1.f, 2.f, 3.f, 4.f});
  rows.num_rows = 3;
  table.sparse_grad = rows;
  opt.Apply({&table});
  EXPECT_EQ(table.value.ToVector(), (std::vector<float>{0.f, 0.f, 0.f, 0.f, -4.f, -6.f}));
}

TEST(OptimizerApply, AddsDenseAndSparseGradientsOfOneParameter) {
  Adam both({.learning_rate = 0.1});
  Adam summed({.learning_rate = 0.1});
  Parameter p;
  p.name = "p";
  p.value = Tensor::Zeros({2, 2});
  p.grad = Tensor::FromVector({2, 2}, {1.f, 1.f, 1.f, 1.f});
  tensor::SparseRows rows;
  rows.ids = Tensor::FromInts({1}, {1});
  rows.values = Tensor::FromVector({1, 2}, {2.f, -3.f});
  rows.num_rows = 2;
  p.sparse_grad = rows;
  both.Apply({&p});
  Tensor q = Tensor::Zeros({2, 2});
  summed.ApplyDense("p", q, Tensor::FromVector({2, 2}, {1.f, 1.f, 3.f, -2.f}));
  EXPECT_EQ(p.value.ToVector(), q.ToVector());
}

TEST(OptimizerSlots, AreNamedAfterTheVariableAndKerasSlotNames) {
  Adam opt;
  Tensor w = Tensor::Zeros({2});
  Tensor b = Tensor::Zeros({1});
  opt.ApplyDense("dense/kernel", w, Tensor::Full({2}, 1.f));
  opt.ApplyDense("dense/bias", b, Tensor::Full({1}, 1.f));
  const auto slots = opt.Slots();
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].first, "dense/bias/m");
  EXPECT_EQ(slots[1].first, "dense/bias/v");
  EXPECT_EQ(slots[2].first, "dense/kernel/m");
  EXPECT_EQ(slots[3].first, "dense/kernel/v");
  EXPECT_NEAR(slots[2].second.ToVector()[0], 0.1f, 1e-7);  // (1 - beta_1) * g
  EXPECT_EQ(opt.SlotNames(), (std::vector<std::string>{"m", "v"}));
  EXPECT_EQ(Rmsprop({.momentum = 0.5, .centered = true}).SlotNames(),
            (std::vector<std::string>{"rms", "momentum", "mg"}));
  EXPECT_TRUE(Sgd().SlotNames().empty());
}

TEST(OptimizerSlots, SlotsAreCopiesNotViewsOfLiveState) {
  Adam opt;
  Tensor w = Tensor::Zeros({1});
  opt.ApplyDense("w", w, Tensor::Full({1}, 1.f));
  const auto before = opt.Slots();
  opt.ApplyDense("w", w, Tensor::Full({1}, 1.f));
  EXPECT_NEAR(before[0].second.item(), 0.1f, 1e-7);
}

TEST(OptimizerSlots, RestoredStateContinuesExactlyLikeTheOriginal) {
  Nadam original({.learning_rate = 0.01});
  Tensor w = Tensor::FromVector({3}, {1.f, -2.f, 0.5f});
  const Tensor g = Tensor::FromVector({3}, {0.3f, -0.1f, 2.f});
  for (int i = 0; i < 3; ++i) {
    original.ApplyDense("w", w, g);
    original.FinishStep();
  }
  Nadam restored({.learning_rate = 0.01});
  ASSERT_TRUE(restored.RestoreSlots(original.Slots()).ok());
  restored.set_iterations(original.iterations());
  Tensor w2 = w.Clone();
  original.ApplyDense("w", w, g);
  restored.ApplyDense("w", w2, g);
  EXPECT_EQ(w.ToVector(), w2.ToVector());
}

TEST(OptimizerSlots, RestoreRejectsUnknownSlotsAndBadNames) {
  Adam opt;
  Status s = opt.RestoreSlots({{"w/momentum", Tensor::Zeros({1})}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "optimizer slot \"w/momentum\": Adam has no slot \"momentum\" "
            "(it keeps: m, v)");
  s = opt.RestoreSlots({{"no_slash", Tensor::Zeros({1})}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("expected \"<variable>/<slot>\""), std::string::npos);
  s = opt.RestoreSlots({{"w/m", Tensor::FromInts({1}, {1})}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("float32"), std::string::npos);
  EXPECT_TRUE(opt.Slots().empty());  // nothing half-restored
}

TEST(OptimizerLearningRate, TimeDecayDividesByOnePlusDecayTimesIterations) {
  Sgd opt({.learning_rate = 0.1});
  opt.set_decay(0.5);
  EXPECT_DOUBLE_EQ(opt.CurrentLearningRate(), 0.1);
  opt.set_iterations(4);
  EXPECT_DOUBLE_EQ(opt.CurrentLearningRate(), 0.1 / 3.0);
  Tensor w = Tensor::Zeros({1});
  opt.ApplyDense("w", w, Tensor::Full({1}, 3.f));
  EXPECT_NEAR(w.item(), -0.1f, 1e-7);
}

TEST(OptimizerLearningRate, ScheduleIsEvaluatedAtIterations) {
  Sgd opt;
  opt.set_learning_rate_schedule(std::make_unique<PiecewiseConstantDecay>(
      std::vector<double>{1}, std::vector<double>{1.0, 0.5}));
  Tensor w = Tensor::Zeros({1});
  const Tensor g = Tensor::Full({1}, 1.f);
  for (int i = 0; i < 3; ++i) {
    opt.ApplyDense("w", w, g);
    opt.FinishStep();
  }
  // Steps 0 and 1 use 1.0, step 2 uses 0.5.
  EXPECT_FLOAT_EQ(w.item(), -2.5f);
  EXPECT_DOUBLE_EQ(opt.CurrentLearningRate(), 0.5);
}

TEST(OptimizerClipping, ClipValueClipsEachElement) {
  Sgd opt({.learning_rate = 1.0});
  opt.set_clipvalue(0.5);
  Tensor w = Tensor::Zeros({3});
  const Tensor g = Tensor::FromVector({3}, {2.f, -3.f, 0.25f});
  opt.ApplyDense("w", w, g);
  EXPECT_EQ(w.ToVector(), (std::vector<float>{-0.5f, 0.5f, -0.25f}));
  EXPECT_EQ(g.ToVector(), (std::vector<float>{2.f, -3.f, 0.25f}));  // untouched
}

TEST(OptimizerClipping, ClipNormScalesGradientsAboveTheNorm) {
  Sgd opt({.learning_rate = 1.0});
  opt.set_clipnorm(1.0);
  Tensor w = Tensor::Zeros({2});
  opt.ApplyDense("w", w, Tensor::FromVector({2}, {3.f, 4.f}));  // norm 5
  EXPECT_NEAR(w.ToVector()[0], -0.6f, 1e-6);
  EXPECT_NEAR(w.ToVector()[1], -0.8f, 1e-6);
  Tensor v = Tensor::Zeros({2});
  opt.ApplyDense("v", v, Tensor::FromVector({2}, {0.3f, 0.4f}));  // below
  EXPECT_EQ(v.ToVector(), (std::vector<float>{-0.3f, -0.4f}));
}

}  // namespace
}  // namespace edl::nn::optim
