// HostReadback: a tensor read back to the host in two halves. The
// constructor queues the copy behind the device work already queued and
// returns at once; Get() waits for it. A training loop reads step k's loss
// and outputs this way after queuing step k + 1, so the GPU always has a
// step to run while the host prepares the next (roles/local/local_trainer.cc).
// For a CPU tensor nothing is copied and Get() returns the tensor itself.
//
//   HostReadback loss(loss_tensor);   // returns at once
//   ... queue more work ...
//   float value = loss.Get().item();  // waits for the copy only
//
// Thread-compatible. A readback not read by Get() is finished (waited for)
// when destroyed.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace edl::tensor {

class DeviceRuntime;

class HostReadback {
 public:
  HostReadback() = default;
  explicit HostReadback(const Tensor& t);
  HostReadback(HostReadback&& other) noexcept;
  HostReadback& operator=(HostReadback&& other) noexcept;
  HostReadback(const HostReadback&) = delete;
  HostReadback& operator=(const HostReadback&) = delete;
  ~HostReadback();

  bool defined() const { return source_.defined() || host_.defined(); }
  // The tensor on the host (waits for the copy the first time).
  // REQUIRES: defined().
  const Tensor& Get();

 private:
  void Finish();

  Tensor source_;  // the device tensor, kept alive until the copy is done
  Tensor host_;
  DeviceRuntime* runtime_ = nullptr;
  uint64_t ticket_ = 0;
  bool pending_ = false;
};

}  // namespace edl::tensor
