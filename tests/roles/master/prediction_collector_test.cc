#include "roles/master/prediction_collector.h"

#include <gtest/gtest.h>

namespace edl::roles::master {
namespace {

using tensor::Tensor;

TEST(PredictionCollector, AssemblesOutputsInRecordOrder) {
  PredictionCollector c(5);
  ASSERT_TRUE(c.Add(3, 5, Tensor::FromVector({2, 2}, {6, 7, 8, 9})).ok());
  EXPECT_FALSE(c.complete());
  EXPECT_EQ(c.Assemble().status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(c.Add(0, 3, Tensor::FromVector({3, 2}, {0, 1, 2, 3, 4, 5})).ok());
  EXPECT_TRUE(c.complete());
  auto all = c.Assemble();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->shape(), (tensor::Shape{5, 2}));
  EXPECT_EQ(all->ToVector(),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(PredictionCollector, RejectsOutputsOfTheWrongShape) {
  PredictionCollector c(5);
  Status s = c.Add(0, 3, Tensor::FromVector({2, 1}, {0, 1}));
  EXPECT_EQ(s.message(),
            "prediction data records [0, 3): expected predictions of 3 rows, "
            "got shape [2, 1]");
  s = c.Add(0, 3, Tensor());
  EXPECT_EQ(s.message(),
            "prediction data records [0, 3): expected predictions of 3 rows, "
            "got none");
  ASSERT_TRUE(c.Add(0, 3, Tensor::FromVector({3, 1}, {0, 1, 2})).ok());
  s = c.Add(3, 5, Tensor::FromVector({2, 2}, {0, 1, 2, 3}));
  EXPECT_EQ(
      s.message(),
      "prediction data records [3, 5): predictions of shape [2, 2] float32 "
      "do not match the others' [3, 1] float32");
  s = c.Add(4, 9, Tensor::FromVector({5, 1}, {0, 1, 2, 3, 4}));
  EXPECT_EQ(
      s.message(),
      "prediction data records [4, 9): outside the data set of 5 records");
  EXPECT_EQ(c.records_received(), 3);
}

TEST(PredictionCollector, KeepsTheFirstOfARangeReceivedTwice) {
  PredictionCollector c(1);
  ASSERT_TRUE(c.Add(0, 1, Tensor::FromVector({1, 1}, {1})).ok());
  ASSERT_TRUE(c.Add(0, 1, Tensor::FromVector({1, 1}, {2})).ok());
  EXPECT_EQ(c.records_received(), 1);
  EXPECT_EQ(c.Assemble()->ToVector(), std::vector<float>{1});
}

TEST(PredictionCollector, HasNothingToAssembleWithoutPredictionData) {
  PredictionCollector c(0);
  EXPECT_EQ(c.Assemble().status().message(), "the job has no prediction data");
}

}  // namespace
}  // namespace edl::roles::master
