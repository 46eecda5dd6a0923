#include "tensor/tensor.h"

#include <gtest/gtest.h>

namespace edl::tensor {
namespace {

TEST(Tensor, ReshapeSharesStorageWithTheOriginal) {
  Tensor a = Tensor::FromVector({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = a.Reshape({3, -1});
  EXPECT_EQ(b.shape(), (Shape{3, 2}));
  EXPECT_TRUE(b.SharesStorageWith(a));
  b.f32()[5] = 60;
  EXPECT_EQ(a.ToVector().back(), 60);
}

TEST(Tensor, SliceViewsRowsOfTheOriginal) {
  Tensor a = Tensor::FromVector({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor s = a.Slice(1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.ToVector(), (std::vector<float>{3, 4, 5, 6}));
  s.Fill(0);
  EXPECT_EQ(a.ToVector(), (std::vector<float>{1, 2, 0, 0, 0, 0}));
}

TEST(Tensor, CloneDoesNotShareStorage) {
  Tensor a = Tensor::FromVector({2}, {1, 2});
  Tensor c = a.Clone();
  EXPECT_FALSE(c.SharesStorageWith(a));
  c.f32()[0] = 9;
  EXPECT_EQ(a.ToVector()[0], 1);
}

TEST(Tensor, EmptySliceHasNoElements) {
  Tensor a = Tensor::Zeros({4, 3});
  EXPECT_EQ(a.Slice(2, 2).numel(), 0);
  EXPECT_EQ(a.Slice(2, 2).shape(), (Shape{0, 3}));
}

TEST(Tensor, DiesOnReshapeToADifferentSize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Tensor a = Tensor::Zeros({4, 3});
  EXPECT_DEATH(a.Reshape({5, 2}), "->");
}

}  // namespace
}  // namespace edl::tensor
