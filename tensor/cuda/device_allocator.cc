#include "tensor/cuda/device_allocator.h"

#include <cuda_runtime.h>

#include "base/check.h"

namespace edl::tensor::cuda {

DeviceAllocator::~DeviceAllocator() { ReleaseCached(); }

size_t DeviceAllocator::BucketSize(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes >= kMiB) return (bytes + kMiB - 1) / kMiB * kMiB;
  size_t bucket = 512;
  while (bucket < bytes) bucket <<= 1;
  return bucket;
}

void* DeviceAllocator::Allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t bucket = BucketSize(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(bucket);
    if (it != free_.end() && !it->second.empty()) {
      void* data = it->second.back();
      it->second.pop_back();
      return data;
    }
  }
  void* data = nullptr;
  if (cudaMalloc(&data, bucket) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state
    ReleaseCached();
    cudaError_t rc = cudaMalloc(&data, bucket);
    EDL_CHECK(rc == cudaSuccess) << "CUDA out of memory allocating " << bucket
                                 << " bytes: " << cudaGetErrorString(rc);
  }
  return data;
}

void DeviceAllocator::Free(void* data, size_t bytes) {
  if (data == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_[BucketSize(bytes)].push_back(data);
}

void DeviceAllocator::ReleaseCached() {
  std::unordered_map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks.swap(free_);
  }
  for (auto& [bucket, list] : blocks) {
    for (void* data : list) cudaFree(data);
  }
}

}  // namespace edl::tensor::cuda
