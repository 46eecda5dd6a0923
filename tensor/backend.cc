#include "tensor/backend.h"

#include "tensor/device_runtime.h"
#include "tensor/dropout_mask.h"

namespace edl::tensor {
namespace {
// The override installed by the innermost ScopedBackend of this thread.
thread_local Backend* scoped_backend = nullptr;
}  // namespace

void Backend::DropoutMask(uint64_t seed, uint64_t drop_below, float keep_scale, Tensor& mask) {
  float* m = mask.f32();
  const int64_t n = mask.numel();
  for (int64_t i = 0; i < n; ++i) m[i] = DropoutMaskAt(seed, i, drop_below, keep_scale);
}

Backend& BackendFor(Device device) {
  if (scoped_backend != nullptr) return *scoped_backend;
  switch (device) {
    case Device::kCPU: return CpuBackend();
    case Device::kCUDA:
      if (DeviceRuntime* runtime = RuntimeFor(device)) return runtime->backend();
      break;
  }
  EDL_CHECK(false) << "no backend for device " << DeviceName(device)
                   << ": LoadCudaRuntime() has not succeeded";
  return CpuBackend();
}

ScopedBackend::ScopedBackend(Backend& backend) : previous_(scoped_backend) {
  scoped_backend = &backend;
}

ScopedBackend::~ScopedBackend() { scoped_backend = previous_; }

}  // namespace edl::tensor
