// HostMemoryDeviceRuntime: a fake accelerator for tests on machines without
// a GPU. Its "device" memory is host memory and its backend is CpuBackend()
// (which only reads raw pointers), so tensors tagged Device::kCUDA compute
// exactly as CPU tensors do, while every op still CHECKs that its inputs
// share a device: a host tensor mixed into device work fails loudly.
//
//   HostMemoryDeviceRuntime fake;
//   tensor::ScopedDeviceRuntime scope(tensor::Device::kCUDA, &fake);
//
// It counts uploads and downloads so tests can assert where copies happen.
// Thread-safe (counters are atomic; memory comes from aligned_alloc).
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tensor/backend.h"
#include "tensor/device_runtime.h"

namespace edl::testing {

class HostMemoryDeviceRuntime : public tensor::DeviceRuntime {
 public:
  std::string Describe() const override { return "host memory (fake device)"; }
  tensor::Backend& backend() override { return tensor::CpuBackend(); }

  void* Allocate(size_t bytes) override {
    if (bytes == 0) return nullptr;
    live_bytes_ += bytes;
    // 64-byte aligned as CPU storage, so oneDNN sees the same layout.
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  void Free(void* data, size_t bytes) override {
    if (data == nullptr) return;
    live_bytes_ -= bytes;
    std::free(data);
  }
  void CopyToDevice(void* dst, const void* src, size_t bytes) override {
    ++uploads_;
    std::memcpy(dst, src, bytes);
  }
  void CopyToHost(void* dst, const void* src, size_t bytes) override {
    ++downloads_;
    std::memcpy(dst, src, bytes);
  }
  void CopyOnDevice(void* dst, const void* src, size_t bytes) override {
    std::memmove(dst, src, bytes);
  }
  void Synchronize() override {}

  int64_t uploads() const { return uploads_.load(); }
  int64_t downloads() const { return downloads_.load(); }
  // Bytes allocated and not yet freed.
  int64_t live_bytes() const { return live_bytes_.load(); }

 private:
  std::atomic<int64_t> uploads_{0};
  std::atomic<int64_t> downloads_{0};
  std::atomic<int64_t> live_bytes_{0};
};

}  // namespace edl::testing
