// RAII wrappers of the cuDNN descriptors the backend builds per call: NHWC
// (or NCHW) float tensors, OHWI (cuDNN's NHWC "KRSC") or OIHW filters, 2-D cross-correlations
// restricted to FMA kernels (no TF32, so results match the fp32 reference),
// grouped ones included, and softmax's [outer, size, inner] view.
#pragma once

#include <cudnn.h>

#include <climits>
#include <cstdint>

#include "tensor/cuda/cuda_context.h"

namespace edl::tensor::cuda {

inline int CheckedInt(int64_t v) {
  EDL_CHECK(v >= 0 && v <= INT_MAX) << "dimension " << v << " too large for cuDNN";
  return static_cast<int>(v);
}

class TensorDesc {
 public:
  // NHWC image [n, h, w, c].
  static TensorDesc Nhwc(int64_t n, int64_t h, int64_t w, int64_t c) {
    TensorDesc d;
    EDL_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.desc_, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT,
                                               CheckedInt(n), CheckedInt(c), CheckedInt(h),
                                               CheckedInt(w)));
    return d;
  }
  // NCHW image [n, c, h, w] (the layout of the convolutions that run on
  // transposed copies, conv.cc).
  static TensorDesc Nchw(int64_t n, int64_t c, int64_t h, int64_t w) {
    TensorDesc d;
    EDL_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                               CheckedInt(n), CheckedInt(c), CheckedInt(h),
                                               CheckedInt(w)));
    return d;
  }
  // Dense [n, c, h, 1] (NCHW): softmax over c.
  static TensorDesc Nch(int64_t n, int64_t c, int64_t h) {
    TensorDesc d;
    EDL_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                               CheckedInt(n), CheckedInt(c), CheckedInt(h), 1));
    return d;
  }
  TensorDesc(TensorDesc&& o) noexcept : desc_(o.desc_) { o.desc_ = nullptr; }
  ~TensorDesc() {
    if (desc_) cudnnDestroyTensorDescriptor(desc_);
  }
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  TensorDesc() { EDL_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_)); }
  cudnnTensorDescriptor_t desc_ = nullptr;
};

class FilterDesc {
 public:
  // OHWI: [o, kh, kw, c] (c: the input channels of one group); with nchw,
  // OIHW: [o, c, kh, kw].
  FilterDesc(int64_t o, int64_t kh, int64_t kw, int64_t c, bool nchw = false) {
    EDL_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc_));
    EDL_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
        desc_, CUDNN_DATA_FLOAT, nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, CheckedInt(o),
        CheckedInt(c), CheckedInt(kh), CheckedInt(kw)));
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(desc_); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

class ConvDesc {
 public:
  ConvDesc(int64_t pad_h, int64_t pad_w, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
           int64_t groups) {
    EDL_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc_));
    EDL_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        desc_, CheckedInt(pad_h), CheckedInt(pad_w), CheckedInt(sh), CheckedInt(sw), CheckedInt(dh),
        CheckedInt(dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    EDL_CUDNN_CHECK(cudnnSetConvolutionMathType(desc_, CUDNN_FMA_MATH));
    EDL_CUDNN_CHECK(cudnnSetConvolutionGroupCount(desc_, CheckedInt(groups)));
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(desc_); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
  cudnnConvolutionDescriptor_t get() const { return desc_; }

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

}  // namespace edl::tensor::cuda
