// Embedding lookup with a sparse gradient (nn/functional.h).
#include <algorithm>
#include <cstring>
#include <utility>

#include "nn/autograd_node.h"
#include "nn/functional.h"

namespace edl::nn::fn {
namespace {

// Appends rows to p.sparse_grad (repeated ids are kept; Coalesce() sums).
void AppendSparseRows(Parameter& p, tensor::SparseRows rows, const Tensor& dy) {
  if (rows.values.SharesStorageWith(dy)) rows.values = rows.values.Clone();
  if (!p.sparse_grad.has_value()) {
    p.sparse_grad = std::move(rows);
    return;
  }
  tensor::SparseRows& old = *p.sparse_grad;
  const int64_t n0 = old.ids.numel(), n1 = rows.ids.numel();
  const int64_t d = rows.values.numel() / std::max<int64_t>(n1, 1);
  Tensor ids = Tensor::Empty({n0 + n1}, tensor::DType::kInt64);
  std::memcpy(ids.i64(), old.ids.i64(), n0 * sizeof(int64_t));
  std::memcpy(ids.i64() + n0, rows.ids.i64(), n1 * sizeof(int64_t));
  Tensor values = Tensor::Empty({n0 + n1, d});
  std::memcpy(values.f32(), old.values.f32(), n0 * d * sizeof(float));
  std::memcpy(values.f32() + n0 * d, rows.values.f32(), n1 * d * sizeof(float));
  old.ids = std::move(ids);
  old.values = std::move(values);
}

}  // namespace

Var Embedding(Parameter& table, const Tensor& ids) {
  Tensor int_ids = ids.dtype() == tensor::DType::kInt64
                       ? ids
                       : tensor::Cast(ids, tensor::DType::kInt64);
  Tensor y = tensor::Gather(table.value, int_ids);
  if (!table.trainable || !GradEnabled()) return Var(std::move(y));
  auto node = std::make_shared<Node>();
  Parameter* p = &table;
  const int64_t num_rows = table.value.dim(0);
  node->backward = [p, int_ids, num_rows](const Tensor& dy) {
    AppendSparseRows(*p, tensor::GatherBackward(dy, int_ids, num_rows), dy);
    return std::vector<Tensor>{};
  };
  return MakeResultWithNode(std::move(y), std::move(node));
}

}  // namespace edl::nn::fn
