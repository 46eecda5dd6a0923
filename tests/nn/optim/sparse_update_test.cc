// Sparse (embedding-row) updates: only the given rows move, repeated ids are
// summed, and the touched rows equal the dense update's.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "nn/optim/adadelta.h"
#include "nn/optim/adagrad.h"
#include "nn/optim/adam.h"
#include "nn/optim/adamax.h"
#include "nn/optim/ftrl.h"
#include "nn/optim/nadam.h"
#include "nn/optim/rmsprop.h"
#include "nn/optim/sgd.h"
#include "tensor/ops.h"

namespace edl::nn::optim {
namespace {

using tensor::SparseRows;
using tensor::Tensor;

constexpr int64_t kRows = 6;
constexpr int64_t kDim = 3;

Tensor Table() {
  std::vector<float> v(kRows * kDim);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>(i) - 0.7f;
  return Tensor::FromVector({kRows, kDim}, v);
}

SparseRows Rows(std::vector<int64_t> ids, std::vector<float> values) {
  SparseRows rows;
  const int64_t n = static_cast<int64_t>(ids.size());
  rows.ids = Tensor::FromInts({n}, ids);
  rows.values = Tensor::FromVector({n, kDim}, values);
  rows.num_rows = kRows;
  return rows;
}

// A dense [kRows, kDim] gradient with the rows scattered in (summing repeats).
Tensor DenseOf(const SparseRows& rows) {
  std::vector<float> dense(kRows * kDim, 0.f);
  const std::vector<float> ids = rows.ids.ToVector();
  const std::vector<float> values = rows.values.ToVector();
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int64_t j = 0; j < kDim; ++j) {
      dense[static_cast<size_t>(ids[i]) * kDim + j] += values[i * kDim + j];
    }
  }
  return Tensor::FromVector({kRows, kDim}, dense);
}

using Factory = std::function<std::unique_ptr<Optimizer>()>;

std::vector<std::pair<std::string, Factory>> AllOptimizers() {
  return {
      {"SGD", [] { return std::make_unique<Sgd>(SgdOptions{.learning_rate = 0.1}); }},
      {"SGD momentum",
       [] {
         return std::make_unique<Sgd>(
             SgdOptions{.learning_rate = 0.1, .momentum = 0.9, .nesterov = true});
       }},
      {"Adam", [] { return std::make_unique<Adam>(AdamOptions{.learning_rate = 0.1}); }},
      {"Adam amsgrad",
       [] { return std::make_unique<Adam>(AdamOptions{.learning_rate = 0.1, .amsgrad = true}); }},
      {"Adagrad", [] { return std::make_unique<Adagrad>(AdagradOptions{.learning_rate = 0.1}); }},
      {"RMSprop", [] { return std::make_unique<Rmsprop>(RmspropOptions{.learning_rate = 0.1}); }},
      {"RMSprop centered momentum",
       [] {
         return std::make_unique<Rmsprop>(
             RmspropOptions{.learning_rate = 0.1, .momentum = 0.5, .centered = true});
       }},
      {"Adadelta",
       [] { return std::make_unique<Adadelta>(AdadeltaOptions{.learning_rate = 1.0}); }},
      {"Adamax", [] { return std::make_unique<Adamax>(AdamaxOptions{.learning_rate = 0.1}); }},
      {"Nadam", [] { return std::make_unique<Nadam>(NadamOptions{.learning_rate = 0.1}); }},
      {"Ftrl",
       [] {
         return std::make_unique<Ftrl>(
             FtrlOptions{.learning_rate = 0.1, .l1_regularization_strength = 0.01});
       }},
  };
}

const std::vector<SparseRows>& Steps() {
  static const std::vector<SparseRows> steps = {
      Rows({4, 1}, {0.5f, -1.f, 0.25f, 2.f, 0.f, -0.5f}),
      Rows({1, 3, 1}, {1.f, 1.f, 1.f, -0.3f, 0.2f, 0.1f, 0.5f, -2.f, 0.f}),
      Rows({0, 4}, {0.1f, 0.2f, 0.3f, -0.4f, -0.5f, -0.6f}),
  };
  return steps;
}

TEST(SparseUpdate, TouchedRowsEqualTheDenseUpdateAndOthersStayPut) {
  for (const auto& [name, make] : AllOptimizers()) {
    SCOPED_TRACE(name);
    std::unique_ptr<Optimizer> sparse_opt = make();
    Tensor sparse_table = Table();
    const Tensor initial = Table();
    std::vector<bool> touched(kRows, false);
    for (const SparseRows& rows : Steps()) {
      // The dense optimizer starts from the sparse one's state, so only this
      // step's rule is compared.
      std::unique_ptr<Optimizer> dense_opt = make();
      dense_opt->set_iterations(sparse_opt->iterations());
      ASSERT_TRUE(dense_opt->RestoreSlots(sparse_opt->Slots()).ok());
      Tensor dense_table = sparse_table.Clone();
      const Tensor before = sparse_table.Clone();

      sparse_opt->ApplySparse("table", sparse_table, rows);
      sparse_opt->FinishStep();
      dense_opt->ApplyDense("table", dense_table, DenseOf(rows));

      std::vector<bool> in_step(kRows, false);
      for (float id : rows.ids.ToVector()) in_step[static_cast<size_t>(id)] = true;
      const std::vector<float> s = sparse_table.ToVector();
      const std::vector<float> d = dense_table.ToVector();
      const std::vector<float> b = before.ToVector();
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t j = 0; j < kDim; ++j) {
          const size_t k = static_cast<size_t>(r * kDim + j);
          if (in_step[r]) {
            EXPECT_FLOAT_EQ(s[k], d[k]) << "row " << r;
          } else {
            EXPECT_EQ(s[k], b[k]) << "untouched row " << r << " moved";
          }
        }
        if (in_step[r]) touched[r] = true;
      }
    }
    // Rows never named keep their initial values, slots included.
    const std::vector<float> s = sparse_table.ToVector();
    const std::vector<float> init = initial.ToVector();
    EXPECT_FALSE(touched[2] || touched[5]);
    for (int64_t r : {2, 5}) {
      for (int64_t j = 0; j < kDim; ++j) {
        EXPECT_EQ(s[r * kDim + j], init[r * kDim + j]);
      }
    }
  }
}

TEST(SparseUpdate, SgdAndAdagradSparseEqualsTheFullDenseUpdate) {
  // With a zero gradient SGD and Adagrad leave a row alone, so the sparse
  // update equals the dense update of the whole table.
  for (int which = 0; which < 2; ++which) {
    auto make = [&]() -> std::unique_ptr<Optimizer> {
      if (which == 0) return std::make_unique<Sgd>(SgdOptions{.learning_rate = 0.1});
      return std::make_unique<Adagrad>(AdagradOptions{.learning_rate = 0.1});
    };
    std::unique_ptr<Optimizer> sparse_opt = make();
    std::unique_ptr<Optimizer> dense_opt = make();
    Tensor sparse_table = Table();
    Tensor dense_table = Table();
    for (const SparseRows& rows : Steps()) {
      sparse_opt->ApplySparse("t", sparse_table, rows);
      dense_opt->ApplyDense("t", dense_table, DenseOf(rows));
      sparse_opt->FinishStep();
      dense_opt->FinishStep();
    }
    const std::vector<float> s = sparse_table.ToVector();
    const std::vector<float> d = dense_table.ToVector();
    for (size_t k = 0; k < s.size(); ++k) EXPECT_FLOAT_EQ(s[k], d[k]) << k;
  }
}

TEST(SparseUpdate, RepeatedIdsAreSummedBeforeTheUpdate) {
  Adam repeated({.learning_rate = 0.1});
  Adam summed({.learning_rate = 0.1});
  Tensor a = Table();
  Tensor b = Table();
  repeated.ApplySparse("t", a, Rows({3, 3}, {1.f, 2.f, 3.f, 0.5f, -4.f, 1.f}));
  summed.ApplySparse("t", b, Rows({3}, {1.5f, -2.f, 4.f}));
  const std::vector<float> va = a.ToVector();
  const std::vector<float> vb = b.ToVector();
  for (size_t k = 0; k < va.size(); ++k) EXPECT_EQ(va[k], vb[k]) << k;
}

TEST(SparseUpdate, AnEmptyGradientChangesNothing) {
  Adam opt;
  Tensor t = Table();
  SparseRows empty;
  empty.ids = Tensor::FromInts({0}, {});
  empty.values = Tensor::Zeros({0, kDim});
  empty.num_rows = kRows;
  opt.ApplySparse("t", t, empty);
  const std::vector<float> got = t.ToVector();
  const std::vector<float> want = Table().ToVector();
  EXPECT_EQ(got, want);
}

TEST(SparseUpdate, LargeSparseUpdatesTakeTheParallelPath) {
  // 4096 rows x 32 = 131072 elements, above the parallel threshold.
  const int64_t rows = 8192, dim = 32, n = 4096;
  Tensor table = Tensor::Zeros({rows, dim});
  std::vector<int64_t> ids(n);
  std::vector<float> values(n * dim);
  for (int64_t i = 0; i < n; ++i) ids[i] = 2 * i;  // even rows only
  for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k % 7) - 3.f;
  SparseRows grad;
  grad.ids = Tensor::FromInts({n}, ids);
  grad.values = Tensor::FromVector({n, dim}, values);
  grad.num_rows = rows;
  Sgd opt({.learning_rate = 0.5});
  opt.ApplySparse("t", table, grad);
  const float* w = table.f32();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < dim; ++j) {
      ASSERT_EQ(w[2 * i * dim + j], -0.5f * values[i * dim + j]);
      ASSERT_EQ(w[(2 * i + 1) * dim + j], 0.f);
    }
  }
}

}  // namespace
}  // namespace edl::nn::optim
