#include "tensor/cuda/readback_pool.h"

#include <cstring>

#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {

ReadbackPool::~ReadbackPool() {
  // The runtime lives until exit; failures while the driver shuts down are
  // ignored.
  for (auto& [ticket, c] : started_) {
    if (c.done) cudaEventSynchronize(c.done);
    if (c.pinned) cudaFreeHost(c.pinned);
  }
  for (auto& [capacity, p] : free_buffers_) cudaFreeHost(p);
  for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
}

uint64_t ReadbackPool::Start(const void* device_src, size_t bytes, cudaStream_t stream) {
  Copy c;
  c.bytes = bytes;
  if (bytes > kMaxPinned) {
    c.copied.resize(bytes);
    EDL_CUDA_CHECK(
        cudaMemcpyAsync(c.copied.data(), device_src, bytes, cudaMemcpyDeviceToHost, stream));
    EDL_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > 0 && bytes <= kMaxPinned) {
    size_t capacity = 256;
    while (capacity < bytes) capacity *= 2;
    if (auto it = free_buffers_.find(capacity); it != free_buffers_.end()) {
      c.pinned = it->second;
      free_buffers_.erase(it);
    } else {
      EDL_CUDA_CHECK(
          cudaHostAlloc(reinterpret_cast<void**>(&c.pinned), capacity, cudaHostAllocDefault));
    }
    c.capacity = capacity;
    if (!spare_events_.empty()) {
      c.done = spare_events_.back();
      spare_events_.pop_back();
    } else {
      EDL_CUDA_CHECK(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming));
    }
    EDL_CUDA_CHECK(cudaMemcpyAsync(c.pinned, device_src, bytes, cudaMemcpyDeviceToHost, stream));
    EDL_CUDA_CHECK(cudaEventRecord(c.done, stream));
  }
  const uint64_t ticket = ++last_ticket_;
  started_.emplace(ticket, std::move(c));
  return ticket;
}

void ReadbackPool::Finish(uint64_t ticket, void* host_dst) {
  Copy c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = started_.find(ticket);
    EDL_CHECK(it != started_.end()) << "readback " << ticket << " unknown or already finished";
    c = std::move(it->second);
    started_.erase(it);
  }
  if (c.pinned) {
    EDL_CUDA_CHECK(cudaEventSynchronize(c.done));
    std::memcpy(host_dst, c.pinned, c.bytes);
  } else if (c.bytes > 0) {
    std::memcpy(host_dst, c.copied.data(), c.bytes);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (c.pinned) free_buffers_.emplace(c.capacity, c.pinned);
  if (c.done) spare_events_.push_back(c.done);
}

}  // namespace edl::tensor::cuda
