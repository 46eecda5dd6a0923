// Backend: the primitives one device implements. tensor/ops.cc checks shapes
// and dtypes, allocates every output and then calls exactly one of these;
// a backend may therefore assume its arguments are valid, dense, on its
// device, and that outputs have the right shape and dtype (their contents
// are uninitialized unless stated otherwise). Outputs never alias inputs
// except where a primitive says it works in place.
//
// Backends: ReferenceBackend() (naive loops, the test oracle),
// CpuBackend() (oneDNN) and, for Device::kCUDA, the CUDA/cuDNN backend
// (tensor/cuda/), a run-time plugin that BackendFor(kCUDA) returns once
// LoadCudaRuntime() has loaded it (tensor/device_runtime.h, docs/gpu.md).
// ScopedBackend lets tests run the ordinary ops.h calls on a chosen backend.
//
// Thread-safety: every primitive may be called from several threads at once.
#pragma once

#include <vector>

#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace edl::tensor {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual void SetNumThreads(int n) {}
  virtual int NumThreads() const { return 1; }

  // Elementwise. y has x's shape.
  virtual void EltwiseForward(Eltwise kind, const Tensor& x, float alpha, float beta,
                              Tensor& y) = 0;
  virtual void EltwiseBackward(Eltwise kind, const Tensor& dy, const Tensor& x, float alpha,
                               float beta, Tensor& dx) = 0;
  // y has the broadcast shape of a and b (ranks may differ).
  virtual void BinaryOp(Binary kind, const Tensor& a, const Tensor& b, Tensor& y) = 0;
  virtual void Affine(const Tensor& x, float alpha, float beta, Tensor& y) = 0;
  // y's shape broadcasts to x's shape (y's rank may be smaller).
  virtual void SumToShape(const Tensor& x, Tensor& y) = 0;
  // y += alpha * x, same shapes.
  virtual void AddInPlace(Tensor& y, const Tensor& x, float alpha) = 0;

  // y has x's rank with the reduced axes set to 1. x is not empty.
  virtual void ReduceOp(Reduce kind, const Tensor& x, Tensor& y) = 0;

  // a, b 2-D, or a 3-D with b 2-D or 3-D (same batch). K > 0.
  virtual void MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                      Tensor& c) = 0;
  // x [N, in], w [in, out], bias [out] or undefined, y [N, out].
  virtual void DenseForward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) = 0;

  virtual void Conv2DForward(const Tensor& x, const Tensor& w, const Tensor& bias,
                             const Conv2DParams& p, Tensor& y) = 0;
  virtual void Conv2DBackwardData(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                                  Tensor& dx) = 0;
  // dbias may be undefined (no bias).
  virtual void Conv2DBackwardWeights(const Tensor& dy, const Tensor& x, const Conv2DParams& p,
                                     Tensor& dw, Tensor& dbias) = 0;
  // Returns the backend's workspace for the backward pass (may be undefined).
  virtual Tensor Pool2DForward(PoolKind kind, const Tensor& x, const Pool2DParams& p,
                               Tensor& y) = 0;
  // workspace is what Pool2DForward returned, or undefined (then recomputed).
  virtual void Pool2DBackward(PoolKind kind, const Tensor& dy, const Tensor& x,
                              const Tensor& workspace, const Pool2DParams& p, Tensor& dx) = 0;

  // x viewed as [rows, C]; gamma, beta, mean, variance [C].
  virtual void BatchNormTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 float epsilon, Tensor& y, Tensor& mean, Tensor& variance) = 0;
  virtual void BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                  const Tensor& mean, const Tensor& variance, float epsilon,
                                  Tensor& y) = 0;
  virtual void BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const Tensor& mean, const Tensor& variance, float epsilon,
                                 Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
  // x viewed as [rows, C]; mean, variance [rows].
  virtual void LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                float epsilon, Tensor& y, Tensor& mean, Tensor& variance) = 0;
  virtual void LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                 const Tensor& mean, const Tensor& variance, float epsilon,
                                 Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;

  // axis is non-negative. log selects log-softmax; y is the forward output.
  virtual void Softmax(const Tensor& x, int axis, bool log, Tensor& y) = 0;
  virtual void SoftmaxBackward(const Tensor& dy, const Tensor& y, int axis, bool log,
                               Tensor& dx) = 0;

  // axis is non-negative; outputs are pre-shaped.
  virtual void Concat(const std::vector<Tensor>& xs, int axis, Tensor& y) = 0;
  virtual void Split(const Tensor& x, int axis, std::vector<Tensor>& ys) = 0;
  // Between float32, int64 and uint8 (float -> int truncates toward zero).
  virtual void Cast(const Tensor& x, Tensor& y) = 0;

  // table [V, D], ids int64 (any shape, valid), y [numel(ids), D].
  virtual void Gather(const Tensor& table, const Tensor& ids, Tensor& y) = 0;
  // Allocates its result (its size depends on the data).
  virtual SparseRows Coalesce(const SparseRows& rows) = 0;
  // table[ids[i]] += alpha * values[i].
  virtual void ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) = 0;

  // Transpose (tensor/ops.h): y pre-shaped, perm valid. Backends without
  // keep the defaults (Transpose() false; never called).
  virtual bool HasTranspose() const { return false; }
  virtual void Transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) {
    EDL_CHECK(false) << "backend " << name() << " has no Transpose";
  }

  // mask[i] = DropoutMaskAt(seed, i, drop_below, keep_scale)
  // (tensor/dropout_mask.h). The default is the host loop, for backends
  // whose tensors live in host memory.
  virtual void DropoutMask(uint64_t seed, uint64_t drop_below, float keep_scale, Tensor& mask);

  // Whether Conv2D* honour Conv2DParams::groups > 1. Backends without get
  // one convolution per group from nn/ instead.
  virtual bool GroupedConv() const { return false; }

  // Whole-sequence recurrent cells (tensor/ops.h RnnForward). Backends
  // without them keep the defaults: Rnn(cell) false, and the layers compose
  // the steps from the other primitives.
  virtual bool Rnn(RnnCell cell) const { return false; }
  // Fills y, h, c (LSTM) and returns the workspace for RnnBackward.
  virtual Tensor RnnForward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                            const Tensor& bias, Tensor& y, Tensor& h, Tensor& c) {
    EDL_CHECK(false) << "backend " << name() << " has no RNN primitive";
    return Tensor();
  }
  // dh, dc may be undefined; every gradient output is pre-shaped.
  virtual void RnnBackward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                           const Tensor& bias, const RnnForwardResult& forward, const Tensor& dy,
                           const Tensor& dh, const Tensor& dc, RnnGrads& grads) {
    EDL_CHECK(false) << "backend " << name() << " has no RNN primitive";
  }

  // One optimizer step, in place (tensor/update_rules.h): value and every
  // slot (UpdateSlotCount(rule) of them) have the same numel. ids undefined:
  // grad is dense, numel(value) elements. Otherwise ids int64 [n], unique
  // and in [0, value.dim(0)), and grad holds n rows of value's row size
  // (numel / dim(0)); only those rows of value and slots change.
  virtual void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, Tensor& value,
                           const Tensor& grad, std::vector<Tensor>& slots, const Tensor& ids) = 0;
};

// The naive loops (tensor/reference/) and the oneDNN backend (tensor/cpu/).
Backend& ReferenceBackend();
Backend& CpuBackend();

// The backend ops.h uses for tensors on `device` in this thread.
Backend& BackendFor(Device device);

// While alive, ops.h calls made by this thread run on `backend` whatever the
// device (for tests: the same ops on the reference and on oneDNN). Nests.
class ScopedBackend {
 public:
  explicit ScopedBackend(Backend& backend);
  ~ScopedBackend();
  ScopedBackend(const ScopedBackend&) = delete;
  ScopedBackend& operator=(const ScopedBackend&) = delete;

 private:
  Backend* previous_;
};

}  // namespace edl::tensor
