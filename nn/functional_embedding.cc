// Embedding lookup with a sparse gradient (nn/functional.h).
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
  // Concat runs on the rows' device (ids and values stay where they are).
  old.ids = tensor::Concat({old.ids, rows.ids}, 0);
  old.values = tensor::Concat({old.values, rows.values}, 0);
}

}  // namespace

Var Embedding(Parameter& table, const Tensor& ids) {
  Tensor int_ids =
      ids.dtype() == tensor::DType::kInt64 ? ids : tensor::Cast(ids, tensor::DType::kInt64);
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
