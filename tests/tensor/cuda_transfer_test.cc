// Copies between the host and the GPU: round trips, uploads staged in the
// pinned ring (the source may be overwritten at once) and readbacks started
// now and waited for later (tensor/host_readback.h). Every test skips,
// saying why, where the CUDA runtime cannot be loaded.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tensor/host_readback.h"
#include "tensor/ops.h"
#include "tests/tensor/backend_compare.h"
#include "tests/tensor/cuda_test_runtime.h"

namespace edl::tensor {
namespace {

using testing::Random;

class CudaBackendTransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = testing::LoadBuiltCudaRuntime();
    if (!s.ok()) GTEST_SKIP() << "CUDA runtime unavailable: " << s.message();
  }
};

TEST_F(CudaBackendTransferTest, TensorsRoundTripThroughTheDevice) {
  Tensor x = Random({3, 5, 7}, 1);
  Tensor gpu = x.To(Device::kCUDA);
  EXPECT_EQ(gpu.device(), Device::kCUDA);
  EXPECT_EQ(gpu.shape(), x.shape());
  Tensor copy = gpu.Clone();
  Tensor back = copy.To(Device::kCPU);
  EXPECT_EQ(back.ToVector(), x.ToVector());
  Tensor ids = Tensor::FromInts({4}, {3, -1, 7, 1LL << 40});
  EXPECT_EQ(ids.To(Device::kCUDA).To(Device::kCPU).ToVector(), ids.ToVector());
  Tensor filled = Tensor::Empty({5}, DType::kFloat32, Device::kCUDA);
  filled.Fill(2.5f);
  EXPECT_EQ(filled.To(Device::kCPU).ToVector(), std::vector<float>(5, 2.5f));
}

TEST_F(CudaBackendTransferTest, UploadsSurviveTheirSourceBeingOverwrittenAndTheRingWrapping) {
  auto value = [](int i, int64_t k) { return static_cast<float>(i * 1000003 + k % 9973); };
  std::vector<Tensor> uploaded;
  std::vector<int64_t> sizes;
  for (int i = 0; i < 40; ++i) {
    const int64_t n = i % 7 == 6 ? (int64_t{5} << 20) : (int64_t{1} << 20) - i;
    Tensor host = Tensor::Empty({n});
    float* p = host.f32();
    for (int64_t k = 0; k < n; ++k) p[k] = value(i, k);
    uploaded.push_back(host.To(Device::kCUDA));
    for (int64_t k = 0; k < n; ++k) p[k] = -1.f;
    sizes.push_back(n);
  }
  for (int i = 0; i < 40; ++i) {
    const std::vector<float> back = uploaded[i].ToVector();
    ASSERT_EQ(static_cast<int64_t>(back.size()), sizes[i]);
    for (int64_t k = 0; k < sizes[i]; ++k) {
      ASSERT_EQ(back[k], value(i, k)) << "upload " << i << " element " << k;
    }
  }
}

TEST_F(CudaBackendTransferTest, ReadbacksHoldTheValueAtTheirPlaceInTheStream) {
  // Small readbacks go through pinned buffers and wait only for their own
  // copy; one over 4 MiB is copied at once. Either way a readback sees the
  // tensor as it was when it was started, not the work queued after it.
  for (int64_t n : {int64_t{1}, int64_t{10000}, int64_t{3} << 20}) {
    SCOPED_TRACE(n);
    Tensor host = Random({n}, 7);
    Tensor gpu = host.To(Device::kCUDA);
    HostReadback before(gpu);
    gpu.Fill(7.f);
    HostReadback after(gpu);
    Tensor big = Random({512, 512}, 8).To(Device::kCUDA);
    for (int i = 0; i < 4; ++i) big = MatMul(big, big);  // queued behind both
    EXPECT_EQ(after.Get().ToVector(), std::vector<float>(n, 7.f));
    EXPECT_EQ(before.Get().ToVector(), host.ToVector());
    EXPECT_EQ(before.Get().device(), Device::kCPU);
  }
  // Many in flight, finished out of order and reusing the pinned buffers.
  std::vector<Tensor> hosts;
  std::vector<HostReadback> readbacks;
  for (int i = 0; i < 20; ++i) {
    hosts.push_back(Random({100 + i}, 30 + i));
    readbacks.emplace_back(hosts.back().To(Device::kCUDA));
  }
  for (int i = 19; i >= 0; --i) {
    EXPECT_EQ(readbacks[i].Get().ToVector(), hosts[i].ToVector()) << i;
  }
}

}  // namespace
}  // namespace edl::tensor
