// LoopBackend: every Backend primitive as naive, obviously-correct loops
// (accumulating in double where it matters). It is the oracle the other
// backends are tested against, not a fast path. Stateless; thread-safe.
#pragma once

#include <vector>

#include "tensor/backend.h"

namespace edl::tensor::reference {

class LoopBackend : public Backend {
 public:
  bool GroupedConv() const override { return true; }
  bool HasTranspose() const override { return true; }
  void Transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) override;
  const char* name() const override { return "reference"; }

  void EltwiseForward(Eltwise kind, const Tensor& x, float alpha, float beta, Tensor& y) override;
  void EltwiseBackward(Eltwise kind, const Tensor& dy, const Tensor& x, float alpha, float beta,
                       Tensor& dx) override;
  void BinaryOp(Binary kind, const Tensor& a, const Tensor& b, Tensor& y) override;
  void Affine(const Tensor& x, float alpha, float beta, Tensor& y) override;
  void SumToShape(const Tensor& x, Tensor& y) override;
  void AddInPlace(Tensor& y, const Tensor& x, float alpha) override;
  void ReduceOp(Reduce kind, const Tensor& x, Tensor& y) override;

  void MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              Tensor& c) override;
  void DenseForward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) override;
  void Conv2DForward(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2DParams& p,
                     Tensor& y) override;
  void Conv2DBackwardData(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                          Tensor& dx) override;
  void Conv2DBackwardWeights(const Tensor& dy, const Tensor& x, const Conv2DParams& p, Tensor& dw,
                             Tensor& dbias) override;
  Tensor Pool2DForward(PoolKind kind, const Tensor& x, const Pool2DParams& p, Tensor& y) override;
  void Pool2DBackward(PoolKind kind, const Tensor& dy, const Tensor& x, const Tensor& workspace,
                      const Pool2DParams& p, Tensor& dx) override;

  void BatchNormTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float epsilon,
                         Tensor& y, Tensor& mean, Tensor& variance) override;
  void BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& mean, const Tensor& variance, float epsilon,
                          Tensor& y) override;
  void BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& variance, float epsilon, Tensor& dx, Tensor& dgamma,
                         Tensor& dbeta) override;
  void LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float epsilon,
                        Tensor& y, Tensor& mean, Tensor& variance) override;
  void LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& variance, float epsilon, Tensor& dx, Tensor& dgamma,
                         Tensor& dbeta) override;
  void Softmax(const Tensor& x, int axis, bool log, Tensor& y) override;
  void SoftmaxBackward(const Tensor& dy, const Tensor& y, int axis, bool log, Tensor& dx) override;

  void Concat(const std::vector<Tensor>& xs, int axis, Tensor& y) override;
  void Split(const Tensor& x, int axis, std::vector<Tensor>& ys) override;
  void Cast(const Tensor& x, Tensor& y) override;
  void Gather(const Tensor& table, const Tensor& ids, Tensor& y) override;
  SparseRows Coalesce(const SparseRows& rows) override;
  void ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) override;
  void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, Tensor& value, const Tensor& grad,
                   std::vector<Tensor>& slots, const Tensor& ids) override;
};

// For a tensor of `shape` broadcast to `out` (rank(shape) <= rank(out)): the
// element stride of each of out's dimensions in the tensor, 0 where it is
// broadcast.
std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out);

}  // namespace edl::tensor::reference
