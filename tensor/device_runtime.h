// DeviceRuntime: what the tensor engine needs from an accelerator besides its
// Backend: device memory, copies to and from the host, and a way to wait for
// queued work. The CUDA runtime lives in a plugin (libedl_cuda.so, built from
// tensor/cuda/) that LoadCudaRuntime() dlopens, so the edl binary links no
// CUDA library and runs unchanged on machines without a GPU (docs/gpu.md).
//
// Once loaded, the runtime is registered for the life of the process:
// Storage(bytes, Device::kCUDA) allocates through it and BackendFor(kCUDA)
// returns its backend.
//
// Thread-safety: every member may be called from several threads at once.
// Copies to or from the host return once the host buffer may be reused;
// device work is queued in order on the runtime's stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::tensor {

class Backend;

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // One line: "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB), cuDNN 9.13.0, ...".
  virtual std::string Describe() const = 0;
  virtual Backend& backend() = 0;

  // Device memory; Allocate(0) may return nullptr. Aborts when the device is
  // out of memory (a lost worker, to the master).
  virtual void* Allocate(size_t bytes) = 0;
  // `bytes` is what was passed to Allocate. Free(nullptr, 0) is a no-op.
  virtual void Free(void* data, size_t bytes) = 0;

  virtual void CopyToDevice(void* device_dst, const void* host_src, size_t bytes) = 0;
  virtual void CopyToHost(void* host_dst, const void* device_src, size_t bytes) = 0;
  virtual void CopyOnDevice(void* device_dst, const void* device_src, size_t bytes) = 0;
  // A copy to the host in two halves, so a loop can queue its next step
  // before it waits for this one's results (tensor/host_readback.h).
  // StartCopyToHost queues the copy of `bytes` of device memory after the
  // work already queued and returns at once with a ticket; the device memory
  // must stay allocated until FinishCopyToHost(ticket, host_dst) has waited
  // for the copy and written the bytes to host_dst. Every ticket is finished
  // exactly once.
  virtual uint64_t StartCopyToHost(const void* device_src, size_t bytes) = 0;
  virtual void FinishCopyToHost(uint64_t ticket, void* host_dst) = 0;
  // Waits for all queued device work.
  virtual void Synchronize() = 0;
};

// Bumped when DeviceRuntime or Backend change; a plugin built for another
// version is refused.
inline constexpr int kDeviceRuntimeAbiVersion = 4;

// The plugin's entry point: creates the runtime for GPU 0, or returns
// nonzero with a message in `error`. Lives as long as the process.
extern "C" {
using EdlCudaPluginEntry = int (*)(int abi_version, DeviceRuntime** runtime, char* error,
                                   size_t error_size);
}
inline constexpr const char* kCudaPluginEntrySymbol = "edl_cuda_plugin_create";
inline constexpr const char* kCudaPluginFileName = "libedl_cuda.so";

// $EDL_CUDA_PLUGIN if set, else libedl_cuda.so beside /proc/self/exe.
std::string DefaultCudaPluginPath();

// Opens the plugin at `path` and creates a runtime without registering it.
// Errors name the reason: NotFound (no such plugin file), Unavailable
// (libcuda.so.1 missing, cuBLAS/cuDNN missing, no GPU), FailedPrecondition
// (not an edl plugin, or another ABI version), with dlerror()'s text.
Result<DeviceRuntime*> OpenCudaPlugin(const std::string& path);

// Loads the plugin at DefaultCudaPluginPath() and registers its runtime.
// After one success later calls return OK at once; failures are not
// remembered (a later call tries again).
Status LoadCudaRuntime();

// The registered runtime for `device`, or nullptr (kCPU, or CUDA not loaded).
// A ScopedDeviceRuntime's runtime takes precedence while it lives.
DeviceRuntime* RuntimeFor(Device device);

// For tests: registers `runtime` for `device` (process-wide, every thread)
// for the life of this object, in place of the loaded one if any; the
// previous registration comes back on destruction. With a runtime that
// allocates host memory and runs CpuBackend(), tests exercise the whole
// device path (placement, uploads, downloads, CheckSameDevice) on machines
// without a GPU.
// REQUIRES: device != kCPU; not nested for the same device with
// overlapping lifetimes on several threads; every tensor on `device` is
// destroyed before this object is.
class ScopedDeviceRuntime {
 public:
  ScopedDeviceRuntime(Device device, DeviceRuntime* runtime);
  ~ScopedDeviceRuntime();
  ScopedDeviceRuntime(const ScopedDeviceRuntime&) = delete;
  ScopedDeviceRuntime& operator=(const ScopedDeviceRuntime&) = delete;

 private:
  DeviceRuntime* previous_;
};

}  // namespace edl::tensor
