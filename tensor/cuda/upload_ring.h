// UploadRing: host-to-device copies that do not wait for the GPU. A copy
// from ordinary (pageable) host memory makes the CUDA driver synchronize
// with the stream, so every upload in a training step (a batch, one-hot
// labels, a scalar constant) would stall the host until all queued kernels
// had run, and the GPU would idle while the host prepared the next ones.
// The ring stages each upload in pinned memory (a host memcpy) and queues
// the copy from there; an event per staged region says when the region may
// be written again. Uploads larger than a quarter of the ring are not
// staged (the caller copies synchronously).
//
// Thread-safety: Upload may be called from several threads.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

namespace edl::tensor::cuda {

class UploadRing {
 public:
  explicit UploadRing(size_t capacity_bytes) : capacity_(capacity_bytes) {}
  ~UploadRing();
  UploadRing(const UploadRing&) = delete;
  UploadRing& operator=(const UploadRing&) = delete;

  // Queues the copy of `bytes` from host_src to device_dst on `stream` and
  // returns true; host_src may be reused at once. False (nothing queued)
  // when the copy is too large to stage. REQUIRES: every call passes the
  // same stream (regions are retired in the order they were staged).
  bool Upload(void* device_dst, const void* host_src, size_t bytes, cudaStream_t stream);

 private:
  struct InFlight {
    size_t begin, end;
    cudaEvent_t done;
  };
  // Retires finished regions and waits until none in flight overlaps
  // [begin, end).
  void WaitForRange(size_t begin, size_t end);
  cudaEvent_t NewEvent();

  const size_t capacity_;
  std::mutex mu_;
  char* base_ = nullptr;  // pinned; allocated on first use
  size_t head_ = 0;
  std::deque<InFlight> in_flight_;
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace edl::tensor::cuda
