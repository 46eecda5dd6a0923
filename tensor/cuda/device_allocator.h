// DeviceAllocator: a caching allocator of CUDA device memory. Freed blocks go
// to a free list per size bucket and are handed out again without
// cudaMalloc/cudaFree (both synchronize the device). Blocks are reused in
// stream order: the backend queues all its work on one stream, so a block
// freed while kernels still read it is only rewritten by later work.
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace edl::tensor::cuda {

class DeviceAllocator {
 public:
  DeviceAllocator() = default;
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // Never null for bytes > 0 (aborts when the device is out of memory even
  // after releasing the cache); nullptr for 0.
  void* Allocate(size_t bytes);
  // REQUIRES: `bytes` is what was passed to Allocate.
  void Free(void* data, size_t bytes);
  // Returns every cached block to the driver.
  void ReleaseCached();

  // The size a request is rounded up to: powers of two from 512 bytes below
  // 1 MiB, whole MiB above.
  static size_t BucketSize(size_t bytes);

 private:
  std::mutex mu_;  // guards free_
  std::unordered_map<size_t, std::vector<void*>> free_;
};

// RAII scratch space from a DeviceAllocator (cuDNN workspaces, partial sums).
class DeviceBuffer {
 public:
  DeviceBuffer(DeviceAllocator& allocator, size_t bytes)
      : allocator_(allocator), bytes_(bytes), data_(allocator.Allocate(bytes)) {}
  ~DeviceBuffer() { allocator_.Free(data_, bytes_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }

 private:
  DeviceAllocator& allocator_;
  size_t bytes_;
  void* data_;
};

}  // namespace edl::tensor::cuda
