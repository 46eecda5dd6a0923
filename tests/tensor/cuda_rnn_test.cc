// The CUDA backend's whole-sequence recurrences (cuDNN) and axis
// permutations against the CPU backend's (oneDNN, which
// tests/nn/layers/recurrent_test.cc holds to the composed steps): the same
// ops.h calls on CPU tensors and on copies moved to the GPU must agree.
// Every test skips, saying why, where the CUDA runtime cannot be loaded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tensor/device_runtime.h"
#include "tensor/ops.h"
#include "tests/tensor/backend_compare.h"
#include "tests/tensor/cuda_test_runtime.h"

namespace edl::tensor {
namespace {

using testing::Close;
using testing::Random;

class CudaBackendRnnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = testing::LoadBuiltCudaRuntime();
    if (!s.ok()) GTEST_SKIP() << "CUDA runtime unavailable: " << s.message();
  }
};

void ExpectSame(const Tensor& gpu, const Tensor& cpu, const std::string& what) {
  ASSERT_EQ(gpu.device(), Device::kCUDA) << what;
  EXPECT_TRUE(Close(gpu.To(Device::kCPU), cpu, 1e-4f, 5e-5f)) << what;
}

TEST_F(CudaBackendRnnTest, TransposeMatchesTheHostForEveryPermutation) {
  ASSERT_TRUE(TransposeAvailable(Device::kCUDA));
  const std::vector<std::pair<Shape, std::vector<int>>> cases = {
      {{7, 5}, {1, 0}},
      {{40, 33}, {1, 0}},
      {{2, 3, 4}, {0, 2, 1}},
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4}, {1, 2, 0}},
      {{3, 1, 4, 5}, {3, 1, 0, 2}},
      {{2, 3, 2, 3, 2}, {4, 3, 2, 1, 0}},
  };
  uint32_t seed = 1;
  for (const auto& [shape, perm] : cases) {
    const Tensor x = Random(shape, seed++);
    ExpectSame(Transpose(x.To(Device::kCUDA), perm), Transpose(x, perm),
               "transpose of " + ShapeString(shape));
  }
}

struct RnnCase {
  RnnCell cell;
  int64_t n, t, f, u;
  bool state_gradients;  // dh (and dc) given, or undefined (zero)
};

TEST_F(CudaBackendRnnTest, RecurrencesMatchTheHostForwardAndBackward) {
  const RnnCase cases[] = {
      {RnnCell::kSimpleRNN, 3, 5, 4, 6, true},     {RnnCell::kSimpleRNN, 1, 1, 2, 3, false},
      {RnnCell::kLSTM, 3, 5, 4, 6, true},          {RnnCell::kLSTM, 4, 7, 3, 2, false},
      {RnnCell::kGRUResetAfter, 3, 5, 4, 6, true}, {RnnCell::kGRUResetAfter, 2, 9, 5, 3, false},
      {RnnCell::kLSTM, 16, 20, 32, 64, true},
  };
  uint32_t seed = 10;
  for (const RnnCase& c : cases) {
    const std::string what = "cell " + std::to_string(static_cast<int>(c.cell)) + " N" +
                             std::to_string(c.n) + " T" + std::to_string(c.t) + " F" +
                             std::to_string(c.f) + " U" + std::to_string(c.u);
    SCOPED_TRACE(what);
    ASSERT_TRUE(RnnAvailable(Device::kCUDA, c.cell));
    const int64_t g = RnnGates(c.cell), u = c.u;
    const int64_t bias_size = (c.cell == RnnCell::kGRUResetAfter ? 4 : g) * u;
    // Weights at Glorot's scale: larger ones make the recurrence chaotic, so
    // the two libraries' roundings grow apart step by step.
    const float s = std::sqrt(6.f / static_cast<float>(c.f + g * u));
    const Tensor x = Random({c.n, c.t, c.f}, seed++), w_x = Random({c.f, g * u}, seed++, -s, s),
                 w_h = Random({u, g * u}, seed++, -s, s), bias = Random({bias_size}, seed++),
                 dy = Random({c.n, c.t, u}, seed++), dh = Random({c.n, u}, seed++),
                 dc = Random({c.n, u}, seed++);
    const bool lstm = c.cell == RnnCell::kLSTM;
    auto run = [&](Device d, RnnForwardResult& fwd) {
      fwd = RnnForward(c.cell, x.To(d), w_x.To(d), w_h.To(d), bias.To(d));
      return RnnBackward(c.cell, x.To(d), w_x.To(d), w_h.To(d), bias.To(d), fwd, dy.To(d),
                         c.state_gradients ? dh.To(d) : Tensor(),
                         c.state_gradients && lstm ? dc.To(d) : Tensor());
    };
    RnnForwardResult want_fwd, got_fwd;
    const RnnGrads want = run(Device::kCPU, want_fwd);
    const RnnGrads got = run(Device::kCUDA, got_fwd);
    ExpectSame(got_fwd.y, want_fwd.y, "y");
    ExpectSame(got_fwd.h, want_fwd.h, "h");
    if (lstm) ExpectSame(got_fwd.c, want_fwd.c, "c");
    ExpectSame(got.dx, want.dx, "dx");
    ExpectSame(got.dw_x, want.dw_x, "dw_x");
    ExpectSame(got.dw_h, want.dw_h, "dw_h");
    ExpectSame(got.dbias, want.dbias, "dbias");
  }
}

TEST_F(CudaBackendRnnTest, TheGruThatResetsBeforeTheProductIsLeftToComposedSteps) {
  EXPECT_FALSE(RnnAvailable(Device::kCUDA, RnnCell::kGRU));
  EXPECT_TRUE(RnnAvailable(Device::kCUDA, RnnCell::kGRUResetAfter));
  EXPECT_TRUE(RnnAvailable(Device::kCUDA, RnnCell::kLSTM));
  EXPECT_TRUE(RnnAvailable(Device::kCUDA, RnnCell::kSimpleRNN));
}

}  // namespace
}  // namespace edl::tensor
