// CudaContext: the state every CUDA primitive shares: GPU 0's stream (all
// work is queued in order on it), the caching allocator, the cuBLAS and
// cuDNN handles, and the convolution algorithms chosen per shape. Owned by
// the CudaRuntime (plugin.cc) for the life of the process.
//
// Thread-safety: the stream and allocator may be used from any thread; each
// library handle is used under its mutex (a handle is not reentrant).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>
#include <mutex>
#include <tuple>

#include "tensor/cuda/device_allocator.h"
#include "tensor/cuda/launch.h"

#define EDL_CUBLAS_CHECK(expr)                                   \
  do {                                                           \
    cublasStatus_t edl_blas_rc_ = (expr);                        \
    EDL_CHECK(edl_blas_rc_ == CUBLAS_STATUS_SUCCESS)             \
        << #expr << ": " << cublasGetStatusString(edl_blas_rc_); \
  } while (0)

#define EDL_CUDNN_CHECK(expr)                                 \
  do {                                                        \
    cudnnStatus_t edl_dnn_rc_ = (expr);                       \
    EDL_CHECK(edl_dnn_rc_ == CUDNN_STATUS_SUCCESS)            \
        << #expr << ": " << cudnnGetErrorString(edl_dnn_rc_); \
  } while (0)

namespace edl::tensor::cuda {

// A convolution problem after explicit padding: kind (0 forward, 1 backward
// data, 2 backward filter; 3 more when it runs in NCHW), N, H, W, C, O, kh, kw, strides, dilations,
// pads, groups.
using ConvKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
struct ConvChoice {
  int algorithm = 0;  // the cudnnConvolution*Algo_t value
  size_t workspace_bytes = 0;
};

struct CudaContext {
  cudaStream_t stream = nullptr;
  DeviceAllocator allocator;

  std::mutex blas_mu;  // guards blas
  cublasHandle_t blas = nullptr;

  std::mutex dnn_mu;  // guards dnn and conv_choices
  cudnnHandle_t dnn = nullptr;
  std::map<ConvKey, ConvChoice> conv_choices;
};

}  // namespace edl::tensor::cuda
