// Shape ops, casts and sparse rows: CPU backend vs reference, and known values.
#include <gtest/gtest.h>

#include "tests/tensor/backend_compare.h"

namespace edl::tensor {
namespace {

using testing::ExpectBackendsAgree;
using testing::Random;

TEST(Concat, CpuMatchesTheReferenceOnEveryAxis) {
  for (int axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(axis);
    Shape s1{2, 3, 4}, s2{2, 3, 4};
    int a = axis < 0 ? axis + 3 : axis;
    s2[a] = 5;
    Shape s3 = s1;
    s3[a] = 0;
    Tensor x1 = Random(s1, 61), x2 = Random(s2, 62), x3 = Tensor::Zeros(s3);
    ExpectBackendsAgree([&] {
      return std::vector<Tensor>{Concat({x1, x2, x3}, axis), Concat({x2}, axis)};
    });
  }
}

TEST(Concat, JoinsAlongTheLastAxisAndSplitUndoesIt) {
  Tensor a = Tensor::FromVector({2, 1}, {1, 2});
  Tensor b = Tensor::FromVector({2, 2}, {3, 4, 5, 6});
  Tensor c = Concat({a, b}, 1);
  EXPECT_EQ(c.ToVector(), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  for (Backend* backend : {&CpuBackend(), &ReferenceBackend()}) {
    ScopedBackend scope(*backend);
    std::vector<Tensor> parts = Split(c, -1, {1, 0, 2});
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0].ToVector(), a.ToVector());
    EXPECT_EQ(parts[1].shape(), (Shape{2, 0}));
    EXPECT_EQ(parts[2].ToVector(), b.ToVector());
  }
}

TEST(Concat, JoinsInt64Tensors) {
  Tensor a = Tensor::FromInts({2}, {1, 2}), b = Tensor::FromInts({1}, {3});
  Tensor c = Concat({a, b}, 0);
  EXPECT_EQ(c.dtype(), DType::kInt64);
  EXPECT_EQ(c.ToVector(), (std::vector<float>{1, 2, 3}));
}

TEST(Split, DiesWhenSizesDoNotAddUp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(Split(Tensor::Zeros({4}), 0, {1, 2}), "add up");
}

TEST(Cast, TruncatesTowardZeroAndRoundTrips) {
  Tensor x = Tensor::FromVector({4}, {-1.7f, -0.2f, 0.9f, 2.5f});
  for (Backend* backend : {&CpuBackend(), &ReferenceBackend()}) {
    ScopedBackend scope(*backend);
    Tensor i = Cast(x, DType::kInt64);
    EXPECT_EQ(i.dtype(), DType::kInt64);
    EXPECT_EQ(std::vector<int64_t>(i.i64(), i.i64() + 4), (std::vector<int64_t>{-1, 0, 0, 2}));
    EXPECT_EQ(Cast(i, DType::kFloat32).ToVector(), (std::vector<float>{-1, 0, 0, 2}));
    Tensor bytes = Tensor::Empty({2}, DType::kUInt8);
    bytes.data<uint8_t>()[0] = 7;
    bytes.data<uint8_t>()[1] = 255;
    EXPECT_EQ(Cast(bytes, DType::kFloat32).ToVector(), (std::vector<float>{7, 255}));
  }
}

TEST(Gather, PicksRowsForIdsOfAnyShape) {
  Tensor table = Tensor::FromVector({3, 2}, {0, 1, 10, 11, 20, 21});
  Tensor ids = Tensor::FromInts({2, 2}, {2, 0, 1, 2});
  for (Backend* backend : {&CpuBackend(), &ReferenceBackend()}) {
    ScopedBackend scope(*backend);
    Tensor y = Gather(table, ids);
    EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
    EXPECT_EQ(y.ToVector(), (std::vector<float>{20, 21, 0, 1, 10, 11, 20, 21}));
  }
}

TEST(SparseRows, CoalesceSumsRepeatedIdsInAscendingOrder) {
  SparseRows rows;
  rows.ids = Tensor::FromInts({4}, {5, 1, 5, 3});
  rows.values = Tensor::FromVector({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  rows.num_rows = 6;
  for (Backend* backend : {&CpuBackend(), &ReferenceBackend()}) {
    ScopedBackend scope(*backend);
    SparseRows c = Coalesce(rows);
    EXPECT_EQ(c.ids.ToVector(), (std::vector<float>{1, 3, 5}));
    EXPECT_EQ(c.values.ToVector(), (std::vector<float>{3, 4, 7, 8, 6, 8}));
    EXPECT_EQ(c.num_rows, 6);
  }
}

TEST(SparseRows, CpuMatchesTheReferenceOnRandomRows) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 300; ++i) ids.push_back((i * 37) % 50);
  SparseRows rows;
  rows.ids = Tensor::FromInts({300}, ids);
  rows.values = Random({300, 130}, 71);
  rows.num_rows = 50;
  Tensor table = Random({50, 130}, 72);
  ExpectBackendsAgree([&] {
    SparseRows c = Coalesce(rows);
    Tensor t = table.Clone();
    ScatterAdd(t, rows, -0.5f);
    return std::vector<Tensor>{c.ids, c.values, Densify(rows), t};
  });
}

TEST(SparseRows, GatherBackwardThenDensifyAccumulatesRepeats) {
  Tensor ids = Tensor::FromInts({3}, {1, 1, 0});
  Tensor dy = Tensor::FromVector({3, 2}, {1, 1, 2, 2, 5, 5});
  SparseRows g = GatherBackward(dy, ids, 3);
  EXPECT_EQ(g.values.shape(), (Shape{3, 2}));
  EXPECT_EQ(Densify(g).ToVector(), (std::vector<float>{5, 5, 3, 3, 0, 0}));
}

TEST(DropoutMask, DropsAboutRateOfTheElementsAndScalesTheRest) {
  for (double rate : {0.1, 0.5, 0.9}) {
    SCOPED_TRACE(rate);
    const std::vector<float> m = DropoutMask({200, 500}, rate, 42, Device::kCPU).ToVector();
    int64_t dropped = 0;
    for (float v : m) {
      if (v == 0.f) {
        ++dropped;
      } else {
        ASSERT_FLOAT_EQ(v, static_cast<float>(1.0 / (1.0 - rate)));
      }
    }
    // 100,000 draws: the standard deviation of the fraction is below 0.0016.
    EXPECT_NEAR(static_cast<double>(dropped) / m.size(), rate, 0.01);
  }
}

TEST(DropoutMask, RateZeroKeepsEverythingAndSeedsDecideTheMask) {
  for (float v : DropoutMask({1000}, 0.0, 5, Device::kCPU).ToVector()) ASSERT_EQ(v, 1.f);
  const std::vector<float> a = DropoutMask({4096}, 0.5, 1, Device::kCPU).ToVector();
  EXPECT_EQ(DropoutMask({4096}, 0.5, 1, Device::kCPU).ToVector(), a);
  const std::vector<float> b = DropoutMask({4096}, 0.5, 2, Device::kCPU).ToVector();
  int64_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
  EXPECT_NEAR(differ / 4096.0, 0.5, 0.05);  // independent masks disagree half the time
}

TEST(DropoutMask, TheThreadedLoopMakesTheReferenceMask) {
  ExpectBackendsAgree([] {
    return std::vector<Tensor>{DropoutMask({3, 100003}, 0.3, 77, Device::kCPU)};
  });
}

TEST(DropoutMask, AnElementDependsOnlyOnTheSeedAndItsIndex) {
  const std::vector<float> small = DropoutMask({10}, 0.5, 9, Device::kCPU).ToVector();
  const std::vector<float> large = DropoutMask({10, 10}, 0.5, 9, Device::kCPU).ToVector();
  EXPECT_EQ(std::vector<float>(large.begin(), large.begin() + 10), small);
}

}  // namespace
}  // namespace edl::tensor
