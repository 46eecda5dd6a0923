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
// Thread-safe (counters are atomic; memory comes from aligned_alloc; started
// copies are kept under a mutex).
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/check.h"
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
  uint64_t StartCopyToHost(const void* src, size_t bytes) override {
    ++downloads_;
    std::lock_guard<std::mutex> lock(mu_);
    const auto* p = static_cast<const char*>(src);
    started_[++last_ticket_].assign(p, p + bytes);
    return last_ticket_;
  }
  void FinishCopyToHost(uint64_t ticket, void* dst) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = started_.find(ticket);
    EDL_CHECK(it != started_.end()) << "copy ticket " << ticket << " unknown or finished";
    std::memcpy(dst, it->second.data(), it->second.size());
    started_.erase(it);
  }
  void Synchronize() override {}
  // Copies started and not yet finished.
  size_t unfinished_copies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return started_.size();
  }

  int64_t uploads() const { return uploads_.load(); }
  int64_t downloads() const { return downloads_.load(); }
  // Bytes allocated and not yet freed.
  int64_t live_bytes() const { return live_bytes_.load(); }

 private:
  std::atomic<int64_t> uploads_{0};
  std::atomic<int64_t> downloads_{0};
  std::atomic<int64_t> live_bytes_{0};
  mutable std::mutex mu_;
  uint64_t last_ticket_ = 0;                       // guarded by mu_
  std::map<uint64_t, std::vector<char>> started_;  // guarded by mu_
};

}  // namespace edl::testing
