// The plugin's entry point (edl_cuda_plugin_create, see
// tensor/device_runtime.h) and CudaRuntime, the DeviceRuntime of GPU 0: one
// non-blocking stream, the caching allocator, the cuBLAS and cuDNN handles,
// the pinned upload ring, the readback pool and the CudaBackend over them.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdio>
#include <memory>
#include <string>

#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/cuda_context.h"
#include "tensor/cuda/readback_pool.h"
#include "tensor/cuda/upload_ring.h"
#include "tensor/device_runtime.h"

namespace edl::tensor::cuda {
namespace {

class CudaRuntime final : public DeviceRuntime {
 public:
  explicit CudaRuntime(std::string description) : description_(std::move(description)) {}

  // Creates the stream and library handles; an empty string on success.
  std::string Init() {
    if (cudaError_t rc = cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking);
        rc != cudaSuccess) {
      return std::string("cudaStreamCreate: ") + cudaGetErrorString(rc);
    }
    if (cublasStatus_t rc = cublasCreate(&ctx_.blas); rc != CUBLAS_STATUS_SUCCESS) {
      return std::string("cuBLAS: cublasCreate: ") + cublasGetStatusString(rc);
    }
    EDL_CUBLAS_CHECK(cublasSetStream(ctx_.blas, ctx_.stream));
    // fp32 without TF32, as the reference.
    EDL_CUBLAS_CHECK(cublasSetMathMode(ctx_.blas, CUBLAS_DEFAULT_MATH));
    if (cudnnStatus_t rc = cudnnCreate(&ctx_.dnn); rc != CUDNN_STATUS_SUCCESS) {
      return std::string("cuDNN: cudnnCreate: ") + cudnnGetErrorString(rc);
    }
    EDL_CUDNN_CHECK(cudnnSetStream(ctx_.dnn, ctx_.stream));
    backend_ = std::make_unique<CudaBackend>(ctx_);
    return "";
  }

  std::string Describe() const override { return description_; }
  Backend& backend() override { return *backend_; }
  void* Allocate(size_t bytes) override { return ctx_.allocator.Allocate(bytes); }
  void Free(void* data, size_t bytes) override { ctx_.allocator.Free(data, bytes); }

  void CopyToDevice(void* device_dst, const void* host_src, size_t bytes) override {
    // Staged in pinned memory so the host need not wait for the GPU.
    if (uploads_.Upload(device_dst, host_src, bytes, ctx_.stream)) return;
    EDL_CUDA_CHECK(
        cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, ctx_.stream));
    EDL_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  }
  void CopyToHost(void* host_dst, const void* device_src, size_t bytes) override {
    EDL_CUDA_CHECK(
        cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, ctx_.stream));
    EDL_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  }
  void CopyOnDevice(void* device_dst, const void* device_src, size_t bytes) override {
    EDL_CUDA_CHECK(
        cudaMemcpyAsync(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice, ctx_.stream));
  }
  uint64_t StartCopyToHost(const void* device_src, size_t bytes) override {
    return readbacks_.Start(device_src, bytes, ctx_.stream);
  }
  void FinishCopyToHost(uint64_t ticket, void* host_dst) override {
    readbacks_.Finish(ticket, host_dst);
  }
  void Synchronize() override { EDL_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream)); }

 private:
  std::string description_;
  CudaContext ctx_;
  std::unique_ptr<CudaBackend> backend_;
  UploadRing uploads_{64u << 20};
  ReadbackPool readbacks_;
};

void SetError(char* error, size_t size, const std::string& message) {
  if (size == 0) return;
  std::snprintf(error, size, "%s", message.c_str());
}

}  // namespace
}  // namespace edl::tensor::cuda

extern "C" __attribute__((visibility("default"))) int edl_cuda_plugin_create(
    int abi_version, edl::tensor::DeviceRuntime** runtime, char* error, size_t error_size) {
  using edl::tensor::cuda::SetError;
  if (abi_version != edl::tensor::kDeviceRuntimeAbiVersion) {
    SetError(error, error_size,
             "plugin built for runtime ABI " +
                 std::to_string(edl::tensor::kDeviceRuntimeAbiVersion) + ", edl asks for " +
                 std::to_string(abi_version));
    return 1;
  }
  int count = 0;
  if (cudaError_t rc = cudaGetDeviceCount(&count); rc != cudaSuccess || count == 0) {
    SetError(error, error_size,
             std::string("no usable CUDA GPU: ") +
                 (rc != cudaSuccess ? cudaGetErrorString(rc) : "no device"));
    return 1;
  }
  cudaDeviceProp prop;
  if (cudaError_t rc = cudaGetDeviceProperties(&prop, 0); rc != cudaSuccess) {
    SetError(error, error_size, std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(rc));
    return 1;
  }
  if (cudaError_t rc = cudaSetDevice(0); rc != cudaSuccess) {
    SetError(error, error_size, std::string("cudaSetDevice(0): ") + cudaGetErrorString(rc));
    return 1;
  }
  const size_t dnn = cudnnGetVersion();
  int blas = 0;
  cublasGetProperty(MAJOR_VERSION, &blas);
  int blas_minor = 0;
  cublasGetProperty(MINOR_VERSION, &blas_minor);
  char description[512];
  std::snprintf(description, sizeof(description),
                "%s (sm_%d%d, %.1f GiB, %d GPU%s visible), cuDNN %zu.%zu.%zu, "
                "cuBLAS %d.%d",
                prop.name, prop.major, prop.minor,
                static_cast<double>(prop.totalGlobalMem) / (1u << 30), count, count == 1 ? "" : "s",
                dnn / 10000, (dnn % 10000) / 100, dnn % 100, blas, blas_minor);
  auto created = std::make_unique<edl::tensor::cuda::CudaRuntime>(description);
  if (std::string err = created->Init(); !err.empty()) {
    SetError(error, error_size, err);
    return 1;
  }
  *runtime = created.release();  // lives until exit
  return 0;
}
