// ApplyUpdate (optimizer steps, tensor/update_rules.h): the CPU backend
// against the reference loops for every rule, dense and sparse, and the
// op's contract (sparse = dense restricted to the rows; checks).
#include <gtest/gtest.h>

#include <vector>

#include "tensor/backend.h"
#include "tests/tensor/update_cases.h"

namespace edl::tensor {
namespace {

using testing::AllUpdateRules;
using testing::ExpectBackendsAgree;
using testing::Random;
using testing::RunUpdate;
using testing::TestCoefficients;
using testing::TestSlots;

TEST(ApplyUpdate, CpuMatchesReferenceForEveryRuleOnDenseGradients) {
  // Large enough to split across threads on the CPU backend.
  const Shape shape = {300, 401};
  const Tensor value = Random(shape, 1);
  const Tensor grad = Random(shape, 2, -2.f, 2.f);
  for (UpdateRule rule : AllUpdateRules()) {
    SCOPED_TRACE(UpdateRuleName(rule));
    const std::vector<Tensor> slots = TestSlots(rule, shape, 3);
    ExpectBackendsAgree([&] { return RunUpdate(rule, value, grad, slots, Tensor(), Device::kCPU); },
                        1e-6f, 1e-7f);
  }
}

TEST(ApplyUpdate, CpuMatchesReferenceForEveryRuleOnSparseRows) {
  const Shape shape = {50, 7};
  const Tensor value = Random(shape, 4);
  const Tensor ids = Tensor::FromInts({5}, {31, 2, 49, 0, 17});
  const Tensor grad = Random({5, 7}, 5, -2.f, 2.f);
  for (UpdateRule rule : AllUpdateRules()) {
    SCOPED_TRACE(UpdateRuleName(rule));
    const std::vector<Tensor> slots = TestSlots(rule, shape, 6);
    ExpectBackendsAgree([&] { return RunUpdate(rule, value, grad, slots, ids, Device::kCPU); },
                        1e-6f, 1e-7f);
  }
}

TEST(ApplyUpdate, SparseRowsEqualTheDenseUpdateOfThoseRowsAndLeaveTheRest) {
  const Shape shape = {6, 4};
  const Tensor value = Random(shape, 7);
  const Tensor ids = Tensor::FromInts({2}, {4, 1});
  const Tensor rows = Random({2, 4}, 8);
  for (UpdateRule rule : AllUpdateRules()) {
    SCOPED_TRACE(UpdateRuleName(rule));
    const std::vector<Tensor> slots = TestSlots(rule, shape, 9);
    const std::vector<Tensor> sparse = RunUpdate(rule, value, rows, slots, ids, Device::kCPU);
    for (int64_t r = 0; r < shape[0]; ++r) {
      const int64_t k = r == 4 ? 0 : r == 1 ? 1 : -1;
      if (k < 0) {
        // Untouched: value and slots exactly as they were.
        EXPECT_EQ(sparse[0].Slice(r, r + 1).ToVector(), value.Slice(r, r + 1).ToVector())
            << "row " << r;
        for (size_t s = 0; s < slots.size(); ++s) {
          EXPECT_EQ(sparse[s + 1].Slice(r, r + 1).ToVector(), slots[s].Slice(r, r + 1).ToVector())
              << "row " << r << " slot " << s;
        }
        continue;
      }
      // A dense update of this row alone must give the same numbers.
      std::vector<Tensor> row_slots;
      for (const Tensor& s : slots) row_slots.push_back(s.Slice(r, r + 1));
      const std::vector<Tensor> dense = RunUpdate(rule, value.Slice(r, r + 1), rows.Slice(k, k + 1),
                                                  row_slots, Tensor(), Device::kCPU);
      for (size_t j = 0; j < dense.size(); ++j) {
        EXPECT_EQ(sparse[j].Slice(r, r + 1).ToVector(), dense[j].ToVector())
            << "row " << r << " output " << j;
      }
    }
  }
}

TEST(ApplyUpdate, PlainSgdStepsAgainstTheGradient) {
  Tensor value = Tensor::FromVector({3}, {1.f, 2.f, 3.f});
  std::vector<Tensor> none;
  UpdateCoefficients c;
  c.lr = 0.5f;
  ApplyUpdate(UpdateRule::kSgd, c, value, Tensor::FromVector({3}, {2.f, -2.f, 0.f}), none);
  EXPECT_EQ(value.ToVector(), (std::vector<float>{0.f, 3.f, 3.f}));
}

TEST(ApplyUpdate, EmptyValuesAndNoRowsChangeNothing) {
  Tensor empty = Tensor::Zeros({0, 3});
  std::vector<Tensor> slots = {Tensor::Zeros({0, 3})};
  ApplyUpdate(UpdateRule::kAdagrad, TestCoefficients(), empty, Tensor::Zeros({0, 3}), slots);
  Tensor value = Tensor::FromVector({2, 2}, {1.f, 2.f, 3.f, 4.f});
  slots = {Tensor::Full({2, 2}, 0.1f)};
  ApplyUpdate(UpdateRule::kAdagrad, TestCoefficients(), value, Tensor::Zeros({0, 2}), slots,
              Tensor::FromInts({0}, {}));
  EXPECT_EQ(value.ToVector(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
}

TEST(ApplyUpdateDeathTest, RejectsTheWrongNumberOfSlots) {
  Tensor value = Tensor::Zeros({4});
  std::vector<Tensor> one = {Tensor::Zeros({4})};
  EXPECT_DEATH(ApplyUpdate(UpdateRule::kAdam, TestCoefficients(), value, Tensor::Zeros({4}), one),
               "slots");
}

TEST(ApplyUpdateDeathTest, RejectsASlotOfAnotherSize) {
  Tensor value = Tensor::Zeros({4});
  std::vector<Tensor> slots = {Tensor::Zeros({5})};
  EXPECT_DEATH(
      ApplyUpdate(UpdateRule::kAdagrad, TestCoefficients(), value, Tensor::Zeros({4}), slots),
      "slot");
}

TEST(ApplyUpdateDeathTest, RejectsAGradientOfAnotherSize) {
  Tensor value = Tensor::Zeros({4});
  std::vector<Tensor> none;
  EXPECT_DEATH(ApplyUpdate(UpdateRule::kSgd, TestCoefficients(), value, Tensor::Zeros({3}), none),
               "grad");
}

TEST(ApplyUpdateDeathTest, RejectsSparseRowsOfTheWrongWidth) {
  Tensor value = Tensor::Zeros({4, 3});
  std::vector<Tensor> none;
  EXPECT_DEATH(ApplyUpdate(UpdateRule::kSgd, TestCoefficients(), value, Tensor::Zeros({2, 2}), none,
                           Tensor::FromInts({2}, {0, 1})),
               "rows of 3");
}

TEST(ApplyUpdateDeathTest, RejectsARowIdOutsideTheValue) {
  Tensor value = Tensor::Zeros({4, 3});
  std::vector<Tensor> none;
  EXPECT_DEATH(ApplyUpdate(UpdateRule::kSgd, TestCoefficients(), value, Tensor::Zeros({1, 3}), none,
                           Tensor::FromInts({1}, {4})),
               "outside \\[0, 4\\)");
}

TEST(ApplyUpdateDeathTest, RejectsFloatIds) {
  Tensor value = Tensor::Zeros({4, 3});
  std::vector<Tensor> none;
  EXPECT_DEATH(ApplyUpdate(UpdateRule::kSgd, TestCoefficients(), value, Tensor::Zeros({1, 3}), none,
                           Tensor::Zeros({1})),
               "int64");
}

}  // namespace
}  // namespace edl::tensor
