// The CPU backend's whole-sequence recurrences at their edges: a batch of
// one sequence and sequences of one step (tests/nn/layers/recurrent_test.cc
// holds the general case to the composed steps).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tests/tensor/backend_compare.h"

namespace edl::tensor {
namespace {

using testing::Close;
using testing::Random;

const RnnCell kCells[] = {RnnCell::kSimpleRNN, RnnCell::kLSTM, RnnCell::kGRU,
                          RnnCell::kGRUResetAfter};

struct Problem {
  Tensor x, w_x, w_h, bias, dy;
};

Problem MakeProblem(RnnCell cell, int64_t n, int64_t t) {
  const int64_t f = 2, u = 3, g = RnnGates(cell);
  const int64_t bias_size = (cell == RnnCell::kGRUResetAfter ? 4 : g) * u;
  return {Random({n, t, f}, 1), Random({f, g * u}, 2), Random({u, g * u}, 3),
          Random({bias_size}, 4), Random({n, t, u}, 5)};
}

RnnGrads Gradients(RnnCell cell, const Problem& p) {
  RnnForwardResult forward = RnnForward(cell, p.x, p.w_x, p.w_h, p.bias);
  return RnnBackward(cell, p.x, p.w_x, p.w_h, p.bias, forward, p.dy, Tensor(), Tensor());
}

TEST(RnnPrimitive, OneStepFromTheZeroStateGivesTheRecurrentKernelNoGradient) {
  for (RnnCell cell : kCells) {
    for (int64_t n : {1, 3}) {
      SCOPED_TRACE("cell " + std::to_string(static_cast<int>(cell)) + " N " + std::to_string(n));
      const RnnGrads g = Gradients(cell, MakeProblem(cell, n, 1));
      EXPECT_EQ(g.dw_h.ToVector(), std::vector<float>(g.dw_h.numel(), 0.f));
    }
  }
}

TEST(RnnPrimitive, ASequenceAloneGetsTheGradientsItGetsInABatch) {
  for (RnnCell cell : kCells) {
    for (int64_t t : {1, 2, 5}) {
      SCOPED_TRACE("cell " + std::to_string(static_cast<int>(cell)) + " T " + std::to_string(t));
      const Problem alone = MakeProblem(cell, 1, t);
      // The same sequence twice, the second copy sending no gradient.
      Problem batch = alone;
      batch.x = Concat({alone.x, alone.x}, 0);
      batch.dy = Concat({alone.dy, Tensor::Zeros(alone.dy.shape())}, 0);
      const RnnGrads a = Gradients(cell, alone), b = Gradients(cell, batch);
      EXPECT_TRUE(Close(a.dw_h, b.dw_h, 1e-5f, 1e-6f)) << "dw_h";
      EXPECT_TRUE(Close(a.dw_x, b.dw_x, 1e-5f, 1e-6f)) << "dw_x";
      EXPECT_TRUE(Close(a.dbias, b.dbias, 1e-5f, 1e-6f)) << "dbias";
      EXPECT_TRUE(Close(a.dx, b.dx.Slice(0, 1), 1e-5f, 1e-6f)) << "dx";
    }
  }
}

}  // namespace
}  // namespace edl::tensor
