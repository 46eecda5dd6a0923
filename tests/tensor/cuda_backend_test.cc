// The CUDA backend against the reference loops, primitive by primitive: the
// same ops.h calls run on CPU tensors under ReferenceBackend() and on copies
// moved to the GPU, and the results (moved back) must agree. Every test
// skips, saying why, where the CUDA runtime cannot be loaded (no plugin, no
// driver, no GPU).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tensor/device_runtime.h"
#include "tests/tensor/backend_compare.h"
#include "tests/tensor/cuda_test_runtime.h"
#include "tests/tensor/update_cases.h"

namespace edl::tensor {
namespace {

using testing::Close;
using testing::Random;

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = testing::LoadBuiltCudaRuntime();
    if (!s.ok()) GTEST_SKIP() << "CUDA runtime unavailable: " << s.message();
  }

  // f(device) builds its inputs on `device` (with On) and returns outputs;
  // the CUDA outputs must match the reference's.
  using Outputs = std::vector<Tensor>;
  static void ExpectMatch(const std::function<Outputs(Device)>& f, float rtol = 1e-4f,
                          float atol = 1e-5f) {
    Outputs ref;
    {
      ScopedBackend scope(ReferenceBackend());
      ref = f(Device::kCPU);
    }
    Outputs gpu = f(Device::kCUDA);
    ASSERT_EQ(ref.size(), gpu.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_EQ(gpu[i].device(), Device::kCUDA) << "output " << i;
      EXPECT_TRUE(Close(gpu[i].To(Device::kCPU), ref[i], rtol, atol)) << "output " << i;
    }
  }
};

Tensor On(const Tensor& t, Device d) { return t.To(d); }

TEST_F(CudaBackendTest, EltwiseForwardAndBackwardMatchForEveryKind) {
  struct Case {
    Eltwise kind;
    float alpha, beta, lo, hi;
  };
  const Case cases[] = {
      {Eltwise::kRelu, 0.f, 0.f, -2, 2}, {Eltwise::kRelu, 0.1f, 0.f, -2, 2},
      {Eltwise::kSigmoid, 0, 0, -6, 6},  {Eltwise::kTanh, 0, 0, -3, 3},
      {Eltwise::kGelu, 0, 0, -4, 4},     {Eltwise::kGeluTanh, 0, 0, -4, 4},
      {Eltwise::kElu, 1.f, 0, -3, 3},    {Eltwise::kElu, 0.5f, 0, -3, 3},
      {Eltwise::kSelu, 0, 0, -3, 3},     {Eltwise::kSoftplus, 0, 0, -20, 20},
      {Eltwise::kSwish, 0, 0, -5, 5},    {Eltwise::kLinear, 1.5f, -0.25f, -2, 2},
      {Eltwise::kExp, 0, 0, -5, 5},      {Eltwise::kLog, 0, 0, 0.01f, 10},
      {Eltwise::kSqrt, 0, 0, 0.01f, 10}, {Eltwise::kSquare, 0, 0, -3, 3},
      {Eltwise::kAbs, 0, 0, -3, 3},      {Eltwise::kClip, -0.5f, 0.7f, -2, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(EltwiseName(c.kind));
    Tensor x = Random({7, 131}, 2, c.lo, c.hi);
    Tensor dy = Random({7, 131}, 3);
    ExpectMatch([&](Device d) {
      return Outputs{EltwiseForward(c.kind, On(x, d), c.alpha, c.beta),
                     EltwiseBackward(c.kind, On(dy, d), On(x, d), c.alpha, c.beta)};
    });
  }
}

TEST_F(CudaBackendTest, BinaryOpsBroadcastLikeTheReference) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{4, 5}, {4, 5}}, {{4, 1, 5}, {3, 1}},    {{}, {2, 3}},
      {{2, 3, 4}, {4}}, {{2, 1, 4}, {1, 3, 1}}, {{6, 1}, {1}},
  };
  const Binary kinds[] = {Binary::kAdd, Binary::kSub, Binary::kMul,
                          Binary::kDiv, Binary::kMax, Binary::kMin};
  for (const auto& [sa, sb] : shapes) {
    Tensor a = Random(sa, 4);
    Tensor b = Random(sb, 5, 0.5f, 1.5f);
    for (Binary kind : kinds) {
      SCOPED_TRACE(ShapeString(sa) + " op " + ShapeString(sb) + " kind " +
                   std::to_string(static_cast<int>(kind)));
      ExpectMatch([&](Device d) {
        return Outputs{BinaryOp(kind, On(a, d), On(b, d)), BinaryOp(kind, On(b, d), On(a, d))};
      });
    }
  }
}

TEST_F(CudaBackendTest, AffineAndAddInPlaceMatch) {
  Tensor x = Random({33, 17}, 6), y0 = Random({33, 17}, 7);
  ExpectMatch([&](Device d) {
    Tensor y = On(y0, d);
    AddInPlace(y, On(x, d), -0.75f);
    return Outputs{Affine(On(x, d), 2.5f, -1.f), y};
  });
}

TEST_F(CudaBackendTest, SumToShapeMatchesForEveryBroadcastPattern) {
  Tensor x = Random({2, 3, 4, 5}, 8);
  const Shape targets[] = {{3, 1, 5}, {5}, {1}, {2, 1, 1, 1}, {2, 3, 4, 5}, {4, 1}};
  for (const Shape& s : targets) {
    SCOPED_TRACE(ShapeString(s));
    ExpectMatch([&](Device d) { return Outputs{SumToShape(On(x, d), s)}; });
  }
  Tensor big = Random({3000, 7}, 9);
  ExpectMatch([&](Device d) { return Outputs{SumToShape(On(big, d), {7})}; });
}

TEST_F(CudaBackendTest, ReductionsMatchOverAnyAxes) {
  Tensor x = Random({3, 4, 5, 6}, 10);
  const std::vector<std::vector<int>> axes = {{}, {0}, {-1}, {1, 2}, {0, 3}, {0, 1, 2, 3}};
  for (Reduce kind : {Reduce::kSum, Reduce::kMean, Reduce::kMax, Reduce::kMin}) {
    for (const auto& a : axes) {
      SCOPED_TRACE(std::to_string(static_cast<int>(kind)) + " over " + std::to_string(a.size()) +
                   " axes");
      ExpectMatch([&](Device d) {
        return Outputs{ReduceOp(kind, On(x, d), a, false), ReduceOp(kind, On(x, d), a, true)};
      });
    }
  }
  // Many inputs per output (one block each) and many outputs.
  Tensor wide = Random({3, 5000}, 11), tall = Random({5000, 3}, 12);
  ExpectMatch([&](Device d) {
    return Outputs{ReduceOp(Reduce::kSum, On(wide, d), {1}),
                   ReduceOp(Reduce::kMax, On(tall, d), {0}),
                   ReduceOp(Reduce::kMean, On(tall, d), {})};
  });
}

TEST_F(CudaBackendTest, MatMulMatchesWithEveryTransposeAndBatch) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string(ta ? "A^T" : "A") + (tb ? " B^T" : " B"));
      Tensor a = ta ? Random({19, 13}, 13) : Random({13, 19}, 13);
      Tensor b = tb ? Random({11, 19}, 14) : Random({19, 11}, 14);
      Tensor a3 = ta ? Random({4, 19, 13}, 15) : Random({4, 13, 19}, 15);
      Tensor b3 = tb ? Random({4, 11, 19}, 16) : Random({4, 19, 11}, 16);
      ExpectMatch([&](Device d) {
        return Outputs{MatMul(On(a, d), On(b, d), ta, tb), MatMul(On(a3, d), On(b, d), ta, tb),
                       MatMul(On(a3, d), On(b3, d), ta, tb)};
      });
    }
  }
}

TEST_F(CudaBackendTest, DenseForwardMatchesWithAndWithoutBias) {
  Tensor x = Random({37, 64}, 17), w = Random({64, 10}, 18), b = Random({10}, 19);
  ExpectMatch([&](Device d) {
    return Outputs{DenseForward(On(x, d), On(w, d), On(b, d)),
                   DenseForward(On(x, d), On(w, d), Tensor())};
  });
}

TEST_F(CudaBackendTest, Conv2DMatchesForwardAndBothGradients) {
  struct Case {
    Shape x, w;
    std::array<int64_t, 2> strides, dilations;
    Padding padding;
    int64_t groups = 1;
  };
  const Case cases[] = {
      {{2, 9, 9, 3}, {3, 3, 3, 4}, {1, 1}, {1, 1}, Padding::kValid},
      {{2, 8, 8, 4}, {3, 3, 2, 6}, {1, 1}, {1, 1}, Padding::kSame, 2},   // grouped
      {{2, 9, 9, 6}, {3, 3, 1, 6}, {2, 2}, {1, 1}, Padding::kSame, 6},   // depthwise
      {{2, 7, 7, 3}, {3, 3, 1, 6}, {1, 1}, {1, 1}, Padding::kValid, 3},  // multiplier 2
      {{2, 9, 9, 3}, {3, 3, 3, 4}, {1, 1}, {1, 1}, Padding::kSame},      // symmetric
      {{2, 8, 7, 2}, {2, 2, 2, 5}, {1, 1}, {1, 1}, Padding::kSame},      // asymmetric
      {{1, 10, 11, 4}, {3, 3, 4, 6}, {2, 2}, {1, 1}, Padding::kSame},    // strided
      {{2, 12, 12, 3}, {3, 3, 3, 2}, {1, 1}, {2, 2}, Padding::kSame},    // dilated
      {{3, 7, 5, 1}, {5, 3, 1, 8}, {2, 1}, {1, 1}, Padding::kValid},
      // The shapes of the zoo models' layers, where cuDNN picks other
      // algorithms than for the small cases above.
      {{8, 16, 16, 16}, {3, 3, 16, 32}, {1, 1}, {1, 1}, Padding::kSame},
      {{8, 16, 16, 16}, {1, 1, 16, 32}, {2, 2}, {1, 1}, Padding::kSame},  // projection
      {{16, 28, 28, 1}, {3, 3, 1, 32}, {1, 1}, {1, 1}, Padding::kValid},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ShapeString(c.x) + " * " + ShapeString(c.w) + " in " + std::to_string(c.groups) +
                 " groups");
    Conv2DParams p;
    p.groups = c.groups;
    p.strides = c.strides;
    p.dilations = c.dilations;
    p.padding = ComputePadding(c.padding, c.x[1], c.x[2], c.w[0], c.w[1], c.strides, c.dilations);
    Tensor x = Random(c.x, 20), w = Random(c.w, 21), bias = Random({c.w[3]}, 22);
    Tensor y = Conv2DForward(x, w, bias, p);
    Tensor dy = Random(y.shape(), 23);
    ExpectMatch(
        [&](Device d) {
          Conv2DWeightGrads g =
              Conv2DBackwardWeights(On(dy, d), On(x, d), c.w, p, /*with_bias=*/true);
          return Outputs{Conv2DForward(On(x, d), On(w, d), On(bias, d), p),
                         Conv2DForward(On(x, d), On(w, d), Tensor(), p),
                         Conv2DBackwardData(On(dy, d), On(w, d), c.x, p), g.dw, g.dbias};
        },
        1e-4f, 1e-4f);
  }
}

TEST_F(CudaBackendTest, PoolingMatchesForwardAndBackward) {
  struct Case {
    Shape x;
    std::array<int64_t, 2> kernel, strides;
    Padding padding;
  };
  const Case cases[] = {
      {{2, 8, 8, 3}, {2, 2}, {2, 2}, Padding::kValid},
      {{2, 7, 9, 5}, {2, 2}, {2, 2}, Padding::kSame},
      {{1, 7, 7, 4}, {3, 3}, {1, 1}, Padding::kSame},
      {{3, 9, 6, 2}, {3, 2}, {2, 1}, Padding::kSame},
  };
  for (const Case& c : cases) {
    Pool2DParams p;
    p.kernel = c.kernel;
    p.strides = c.strides;
    p.padding =
        ComputePadding(c.padding, c.x[1], c.x[2], c.kernel[0], c.kernel[1], c.strides, {1, 1});
    for (PoolKind kind : {PoolKind::kMax, PoolKind::kAvg}) {
      SCOPED_TRACE(ShapeString(c.x) + (kind == PoolKind::kMax ? " max" : " avg"));
      Tensor x = Random(c.x, 24);
      Tensor dy = Random(Pool2DForward(kind, x, p).y.shape(), 25);
      ExpectMatch([&](Device d) {
        Pool2DResult f = Pool2DForward(kind, On(x, d), p);
        Pool2DResult without_workspace{f.y, Tensor()};
        return Outputs{f.y, Pool2DBackward(kind, On(dy, d), On(x, d), f, p),
                       Pool2DBackward(kind, On(dy, d), On(x, d), without_workspace, p)};
      });
    }
  }
}

TEST_F(CudaBackendTest, BatchNormMatchesTrainingInferenceAndBackward) {
  for (const Shape& s : {Shape{6, 5}, Shape{16, 10, 10, 8}, Shape{3, 4, 4, 70}}) {
    SCOPED_TRACE(ShapeString(s));
    const int64_t c = s.back();
    Tensor x = Random(s, 26, -2.f, 3.f), dy = Random(s, 27);
    Tensor gamma = Random({c}, 28, 0.5f, 1.5f), beta = Random({c}, 29);
    Tensor mean = Random({c}, 30), var = Random({c}, 31, 0.1f, 2.f);
    ExpectMatch([&](Device d) {
      BatchNormResult t = BatchNormTraining(On(x, d), On(gamma, d), On(beta, d), 1e-3f);
      NormGrads g = BatchNormBackward(On(dy, d), On(x, d), On(gamma, d), t.mean, t.variance, 1e-3f);
      return Outputs{
          t.y,
          t.mean,
          t.variance,
          BatchNormInference(On(x, d), On(gamma, d), On(beta, d), On(mean, d), On(var, d), 1e-3f),
          g.dx,
          g.dgamma,
          g.dbeta};
    });
  }
}

TEST_F(CudaBackendTest, LayerNormMatchesForwardAndBackward) {
  for (const Shape& s : {Shape{5, 7}, Shape{4, 6, 300}, Shape{1000, 16}}) {
    SCOPED_TRACE(ShapeString(s));
    const int64_t c = s.back();
    Tensor x = Random(s, 32, -2.f, 3.f), dy = Random(s, 33);
    Tensor gamma = Random({c}, 34, 0.5f, 1.5f), beta = Random({c}, 35);
    ExpectMatch([&](Device d) {
      LayerNormResult f = LayerNormForward(On(x, d), On(gamma, d), On(beta, d), 1e-5f);
      NormGrads g = LayerNormBackward(On(dy, d), On(x, d), On(gamma, d), f.mean, f.variance, 1e-5f);
      return Outputs{f.y, f.mean, f.variance, g.dx, g.dgamma, g.dbeta};
    });
  }
}

TEST_F(CudaBackendTest, SoftmaxAndLogSoftmaxMatchOnAnyAxis) {
  Tensor x = Random({4, 6, 10}, 36, -5.f, 5.f), dy = Random({4, 6, 10}, 37);
  for (int axis : {-1, 1, 0}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    ExpectMatch([&](Device d) {
      Tensor y = Softmax(On(x, d), axis), ly = LogSoftmax(On(x, d), axis);
      return Outputs{y, SoftmaxBackward(On(dy, d), y, axis), ly,
                     LogSoftmaxBackward(On(dy, d), ly, axis)};
    });
  }
}

TEST_F(CudaBackendTest, ConcatAndSplitMatchOnEveryAxis) {
  Tensor a = Random({2, 3, 4}, 38), b = Random({2, 3, 4}, 39);
  for (int axis : {0, 1, 2}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    Tensor c = Random({2, 3, 4}, 40);
    ExpectMatch([&](Device d) {
      Outputs out{Concat({On(a, d), On(b, d), On(c, d)}, axis)};
      for (Tensor& piece : Split(On(a, d), axis, {1, a.dim(axis) - 1})) {
        out.push_back(piece);
      }
      return out;
    });
  }
  Tensor ids = Tensor::FromInts({2, 2}, {1, 2, 3, 4});
  ExpectMatch([&](Device d) { return Outputs{Concat({On(ids, d), On(ids, d)}, 1)}; });
}

// Uploads are staged in a 64 MiB pinned ring (tensor/cuda/upload_ring.h):
// a source overwritten right after its upload must not change what arrives,
// across wraps of the ring and for uploads too large to stage (20 MiB).
TEST_F(CudaBackendTest, DropoutMasksAreTheHostsBitForBit) {
  for (double rate : {0.0, 0.25, 0.5, 0.9}) {
    SCOPED_TRACE(rate);
    ExpectMatch(
        [&](Device d) {
          return Outputs{DropoutMask({37, 1001}, rate, 12345, d), DropoutMask({5}, rate, 7, d)};
        },
        0.f, 0.f);
  }
}

TEST_F(CudaBackendTest, CastsMatchBetweenFloatInt64AndUInt8) {
  Tensor x = Random({50}, 41, -100.f, 100.f);
  Tensor positive = Random({50}, 42, 0.f, 250.f);
  ExpectMatch([&](Device d) {
    Tensor as_int = Cast(On(x, d), DType::kInt64);
    Tensor as_byte = Cast(On(positive, d), DType::kUInt8);
    return Outputs{as_int, Cast(as_int, DType::kFloat32), Cast(as_byte, DType::kFloat32),
                   Cast(Cast(as_byte, DType::kInt64), DType::kFloat32)};
  });
}

TEST_F(CudaBackendTest, GatherCoalesceAndScatterAddMatch) {
  Tensor table = Random({10, 6}, 43);
  Tensor ids = Tensor::FromInts({2, 4}, {3, 1, 3, 9, 0, 3, 1, 7});
  Tensor dy = Random({2, 4, 6}, 44);
  ExpectMatch([&](Device d) {
    SparseRows rows = GatherBackward(On(dy, d), On(ids, d), 10);
    SparseRows unique = Coalesce(rows);
    Tensor t = On(table, d);
    ScatterAdd(t, rows, -0.5f);
    return Outputs{Gather(On(table, d), On(ids, d)), unique.ids, unique.values, t};
  });
}

TEST_F(CudaBackendTest, CoalesceOfNoRowsIsEmpty) {
  SparseRows rows;
  rows.ids = Tensor::Empty({0}, DType::kInt64, Device::kCUDA);
  rows.values = Tensor::Empty({0, 4}, DType::kFloat32, Device::kCUDA);
  rows.num_rows = 5;
  SparseRows out = Coalesce(rows);
  EXPECT_EQ(out.ids.shape(), (Shape{0}));
  EXPECT_EQ(out.values.shape(), (Shape{0, 4}));
  EXPECT_EQ(out.num_rows, 5);
}

TEST_F(CudaBackendTest, ManyRepeatedIdsCoalesceInAscendingOrder) {
  std::vector<int64_t> v;
  for (int i = 0; i < 5000; ++i) v.push_back((i * 7919) % 37);
  Tensor ids = Tensor::FromInts({5000}, v);
  Tensor values = Random({5000, 3}, 45);
  ExpectMatch([&](Device d) {
    SparseRows rows{On(ids, d), On(values, d), 37};
    SparseRows unique = Coalesce(rows);
    return Outputs{unique.ids, unique.values};
  });
}

// The kernel contracts multiply-adds (nvcc's default) and powf is not
// correctly rounded, hence a tolerance rather than equality. The absolute
// part is 1e-5 because FTRL's linear slot z + g - sigma * w cancels terms
// near 1 in size: on the H100 one element came out -4.3293e-4 against the
// host's -4.3178e-4, a difference of 1.2e-6, i.e. 10 ulp of the terms.
TEST_F(CudaBackendTest, OptimizerUpdatesMatchForEveryRuleDenseAndSparse) {
  const Shape shape = {300, 37};
  const Tensor value = Random(shape, 46);
  const Tensor grad = Random(shape, 47, -2.f, 2.f);
  const Tensor ids = Tensor::FromInts({4}, {299, 3, 150, 0});
  const Tensor rows = Random({4, 37}, 48, -2.f, 2.f);
  for (UpdateRule rule : testing::AllUpdateRules()) {
    SCOPED_TRACE(UpdateRuleName(rule));
    const std::vector<Tensor> slots = testing::TestSlots(rule, shape, 49);
    ExpectMatch([&](Device d) { return testing::RunUpdate(rule, value, grad, slots, Tensor(), d); },
                1e-5f, 1e-5f);
    ExpectMatch([&](Device d) { return testing::RunUpdate(rule, value, rows, slots, ids, d); },
                1e-5f, 1e-5f);
  }
}

TEST_F(CudaBackendTest, OptimizerUpdatesKeepParametersAndSlotsOnTheDevice) {
  Tensor value = Random({8, 3}, 50).To(Device::kCUDA);
  std::vector<Tensor> slots = {Tensor::Zeros({8, 3}).To(Device::kCUDA),
                               Tensor::Zeros({8, 3}).To(Device::kCUDA)};
  ApplyUpdate(UpdateRule::kAdam, testing::TestCoefficients(), value,
              Random({2, 3}, 51).To(Device::kCUDA), slots,
              Tensor::FromInts({2}, {5, 1}).To(Device::kCUDA));
  EXPECT_EQ(value.device(), Device::kCUDA);
  for (const Tensor& s : slots) EXPECT_EQ(s.device(), Device::kCUDA);
  // Rows other than 5 and 1 keep zero moments.
  const std::vector<float> m = slots[0].To(Device::kCPU).ToVector();
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t j = 0; j < 3; ++j) {
      if (r == 5 || r == 1) {
        EXPECT_NE(m[r * 3 + j], 0.f) << r;
      } else {
        EXPECT_EQ(m[r * 3 + j], 0.f) << r;
      }
    }
  }
}

}  // namespace
}  // namespace edl::tensor
