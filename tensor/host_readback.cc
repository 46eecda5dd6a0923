#include "tensor/host_readback.h"

#include <utility>

#include "base/check.h"
#include "tensor/device_runtime.h"

namespace edl::tensor {

HostReadback::HostReadback(const Tensor& t) {
  if (t.device() == Device::kCPU) {
    host_ = t;
    return;
  }
  runtime_ = RuntimeFor(t.device());
  EDL_CHECK(runtime_ != nullptr) << "no runtime for the tensor's device";
  source_ = t;
  host_ = Tensor::Empty(t.shape(), t.dtype(), Device::kCPU);
  ticket_ = runtime_->StartCopyToHost(t.raw_data(), t.bytes());
  pending_ = true;
}

HostReadback::HostReadback(HostReadback&& other) noexcept
    : source_(std::move(other.source_)),
      host_(std::move(other.host_)),
      runtime_(other.runtime_),
      ticket_(other.ticket_),
      pending_(std::exchange(other.pending_, false)) {}

HostReadback& HostReadback::operator=(HostReadback&& other) noexcept {
  if (this != &other) {
    Finish();
    source_ = std::move(other.source_);
    host_ = std::move(other.host_);
    runtime_ = other.runtime_;
    ticket_ = other.ticket_;
    pending_ = std::exchange(other.pending_, false);
  }
  return *this;
}

HostReadback::~HostReadback() { Finish(); }

void HostReadback::Finish() {
  if (!pending_) return;
  runtime_->FinishCopyToHost(ticket_, host_.raw_data());
  pending_ = false;
  source_ = Tensor();
}

const Tensor& HostReadback::Get() {
  EDL_CHECK(defined()) << "HostReadback::Get on an empty readback";
  Finish();
  return host_;
}

}  // namespace edl::tensor
