// DnnlBackend: the CPU backend. oneDNN primitives (JIT kernels) for
// matmul, convolution, pooling, normalization, eltwise, softmax, reduction,
// binary and concat; OpenMP loops for the rest. Primitives are cached by op,
// shapes and parameters so a training step never rebuilds them.
//
// Thread-safety: all primitives may run concurrently from several threads.
#pragma once

#include <vector>

#include "tensor/backend.h"

namespace edl::tensor::cpu {

class DnnlBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  void SetNumThreads(int n) override;
  int NumThreads() const override;

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
  // The host loop of Backend, over the threads (each element is independent).
  void DropoutMask(uint64_t seed, uint64_t drop_below, float keep_scale, Tensor& mask) override;
  void Gather(const Tensor& table, const Tensor& ids, Tensor& y) override;
  SparseRows Coalesce(const SparseRows& rows) override;
  void ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) override;
  bool GroupedConv() const override { return true; }
  bool HasTranspose() const override { return true; }
  void Transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) override;
  bool Rnn(RnnCell cell) const override;
  Tensor RnnForward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                    const Tensor& bias, Tensor& y, Tensor& h, Tensor& c) override;
  void RnnBackward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                   const Tensor& bias, const RnnForwardResult& forward, const Tensor& dy,
                   const Tensor& dh, const Tensor& dc, RnnGrads& grads) override;
  void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, Tensor& value, const Tensor& grad,
                   std::vector<Tensor>& slots, const Tensor& ids) override;
};

}  // namespace edl::tensor::cpu
