// ReadbackPool: device-to-host copies in two halves (DeviceRuntime's
// StartCopyToHost / FinishCopyToHost). Start queues the copy into a pinned
// buffer and records an event; Finish waits for that event only (not for
// work queued after the copy) and copies to the caller's memory. Pinned
// buffers are kept for reuse (powers of two); copies over 4 MiB are made at
// Start instead (a synchronization), as large readbacks are rare.
//
// Thread-safe.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace edl::tensor::cuda {

class ReadbackPool {
 public:
  ReadbackPool() = default;
  ~ReadbackPool();
  ReadbackPool(const ReadbackPool&) = delete;
  ReadbackPool& operator=(const ReadbackPool&) = delete;

  uint64_t Start(const void* device_src, size_t bytes, cudaStream_t stream);
  void Finish(uint64_t ticket, void* host_dst);

 private:
  struct Copy {
    char* pinned = nullptr;  // null: copied at Start into `copied`
    size_t capacity = 0;
    size_t bytes = 0;
    cudaEvent_t done = nullptr;
    std::vector<char> copied;
  };
  static constexpr size_t kMaxPinned = size_t{4} << 20;

  std::mutex mu_;
  uint64_t last_ticket_ = 0;
  std::map<uint64_t, Copy> started_;
  std::multimap<size_t, char*> free_buffers_;  // by capacity
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace edl::tensor::cuda
