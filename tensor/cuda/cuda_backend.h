// CudaBackend: every Backend primitive on CUDA device memory. Matrix
// products run on cuBLAS, convolutions and softmax on cuDNN, everything else
// on edl's kernels (kernels.h). All work is queued on the context's stream;
// primitives return without waiting except Coalesce (its output size depends
// on the data). Semantics are the reference's (tensor/reference/), which the
// tests check op by op; fp32 throughout (no TF32), reductions in double.
//
// Batch normalization uses edl's kernels rather than cuDNN's: cuDNN returns
// the inverse standard deviation and an unbiased running variance, while
// Backend's contract is the biased batch variance, for any epsilon.
//
// Thread-safety: as Backend (see CudaContext).
#pragma once

#include <vector>

#include "tensor/backend.h"
#include "tensor/cuda/cuda_context.h"

namespace edl::tensor::cuda {

// A convolution as cuDNN sees it (conv.cc): the image [n, h, w, c] (padded
// explicitly when the padding is asymmetric), filter [o, kh, kw, c], output
// [n, oh, ow, o].
// c counts all input channels; each of the `groups` groups convolves c /
// groups of them into o / groups outputs (cuDNN's group count).
struct ConvGeometry {
  int64_t n, h, w, c, o, kh, kw, oh, ow;
  int64_t pad_h, pad_w, sh, sw, dh, dw;
  int64_t groups;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(CudaContext& context) : ctx_(context) {}
  const char* name() const override { return "cuda"; }
  bool GroupedConv() const override { return true; }

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
  bool HasTranspose() const override { return true; }
  void Transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) override;
  void Cast(const Tensor& x, Tensor& y) override;
  void DropoutMask(uint64_t seed, uint64_t drop_below, float keep_scale, Tensor& mask) override;
  void Gather(const Tensor& table, const Tensor& ids, Tensor& y) override;
  SparseRows Coalesce(const SparseRows& rows) override;
  void ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) override;
  // Whole sequences on cuDNN (rnn.cc): every cell but kGRU (cuDNN's GRU
  // applies the reset gate after the recurrent product).
  bool Rnn(RnnCell cell) const override { return cell != RnnCell::kGRU; }
  Tensor RnnForward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                    const Tensor& bias, Tensor& y, Tensor& h, Tensor& c) override;
  void RnnBackward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                   const Tensor& bias, const RnnForwardResult& forward, const Tensor& dy,
                   const Tensor& dh, const Tensor& dc, RnnGrads& grads) override;

  void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, Tensor& value, const Tensor& grad,
                   std::vector<Tensor>& slots, const Tensor& ids) override;

 private:
  // Runs one convolution on cuDNN (conv.cc): images NHWC and the filter
  // OHWI, or with nchw images NCHW and the filter OIHW.
  enum class ConvPass { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };
  void RunConvolution(ConvPass pass, bool nchw, const ConvGeometry& g, const float* x,
                      const float* w, const float* dy, float* out);

  CudaContext& ctx_;
};

}  // namespace edl::tensor::cuda
