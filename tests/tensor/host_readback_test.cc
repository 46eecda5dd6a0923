// HostReadback on the host and on the host-memory fake device: the value is
// the tensor's when the readback started, every started copy is finished
// once (by Get or, unread, by the destructor), and moving one hands its copy
// over without finishing it twice.
#include "tensor/host_readback.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "tensor/device_runtime.h"
#include "tests/testing/host_memory_device_runtime.h"

namespace edl::tensor {
namespace {

TEST(HostReadback, OfAHostTensorIsTheTensorItselfWithoutACopy) {
  Tensor t = Tensor::FromVector({3}, {1.f, 2.f, 3.f});
  HostReadback r(t);
  EXPECT_TRUE(r.Get().SharesStorageWith(t));
}

TEST(HostReadback, OfADeviceTensorIsItsValueWhenStarted) {
  testing::HostMemoryDeviceRuntime fake;
  ScopedDeviceRuntime scope(Device::kCUDA, &fake);
  Tensor t = Tensor::FromVector({2, 2}, {1.f, 2.f, 3.f, 4.f}).To(Device::kCUDA);
  HostReadback r(t);
  t.Fill(0.f);
  EXPECT_EQ(r.Get().device(), Device::kCPU);
  EXPECT_EQ(r.Get().shape(), (Shape{2, 2}));
  EXPECT_EQ(r.Get().ToVector(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(fake.unfinished_copies(), 0u);
}

TEST(HostReadback, UnreadOrMovedReadbacksFinishEachCopyOnce) {
  testing::HostMemoryDeviceRuntime fake;
  ScopedDeviceRuntime scope(Device::kCUDA, &fake);
  Tensor t = Tensor::FromVector({1}, {5.f}).To(Device::kCUDA);
  {
    HostReadback unread(t);
    EXPECT_EQ(fake.unfinished_copies(), 1u);
  }
  EXPECT_EQ(fake.unfinished_copies(), 0u);
  HostReadback a(t);
  HostReadback b(std::move(a));
  EXPECT_FALSE(a.defined());
  std::vector<HostReadback> many;
  many.push_back(std::move(b));
  many.emplace_back(t);
  EXPECT_EQ(fake.unfinished_copies(), 2u);
  many[0] = HostReadback(t);  // finishes the copy it replaces
  EXPECT_EQ(fake.unfinished_copies(), 2u);
  EXPECT_EQ(many[0].Get().item(), 5.f);
  EXPECT_EQ(many[1].Get().item(), 5.f);
  EXPECT_EQ(fake.unfinished_copies(), 0u);
}

}  // namespace
}  // namespace edl::tensor
