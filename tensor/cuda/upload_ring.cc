#include "tensor/cuda/upload_ring.h"

#include <algorithm>
#include <cstring>

#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {

UploadRing::~UploadRing() {
  // The runtime lives until exit; the driver may already be shutting down,
  // so failures here are ignored.
  for (InFlight& r : in_flight_) {
    cudaEventSynchronize(r.done);
    cudaEventDestroy(r.done);
  }
  for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
  if (base_) cudaFreeHost(base_);
}

cudaEvent_t UploadRing::NewEvent() {
  if (!spare_events_.empty()) {
    cudaEvent_t e = spare_events_.back();
    spare_events_.pop_back();
    return e;
  }
  cudaEvent_t e;
  EDL_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void UploadRing::WaitForRange(size_t begin, size_t end) {
  // One stream carries every copy, so regions finish in the order they were
  // staged: retire from the front, waiting only while a region still in
  // flight overlaps [begin, end).
  auto overlaps = [&](const InFlight& r) { return r.begin < end && begin < r.end; };
  while (!in_flight_.empty()) {
    const InFlight& front = in_flight_.front();
    if (cudaEventQuery(front.done) != cudaSuccess) {
      if (std::none_of(in_flight_.begin(), in_flight_.end(), overlaps)) return;
      EDL_CUDA_CHECK(cudaEventSynchronize(front.done));
    }
    spare_events_.push_back(front.done);
    in_flight_.pop_front();
  }
}

bool UploadRing::Upload(void* device_dst, const void* host_src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return true;
  if (bytes > capacity_ / 4) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (base_ == nullptr) {
    EDL_CUDA_CHECK(
        cudaHostAlloc(reinterpret_cast<void**>(&base_), capacity_, cudaHostAllocDefault));
  }
  constexpr size_t kAlign = 256;
  size_t begin = (head_ + kAlign - 1) / kAlign * kAlign;
  if (begin + bytes > capacity_) begin = 0;  // wrap
  WaitForRange(begin, begin + bytes);
  std::memcpy(base_ + begin, host_src, bytes);
  EDL_CUDA_CHECK(cudaMemcpyAsync(device_dst, base_ + begin, bytes, cudaMemcpyHostToDevice, stream));
  cudaEvent_t done = NewEvent();
  EDL_CUDA_CHECK(cudaEventRecord(done, stream));
  in_flight_.push_back(InFlight{begin, begin + bytes, done});
  head_ = begin + bytes;
  return true;
}

}  // namespace edl::tensor::cuda
