#include "roles/master/prediction_collector.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace edl::roles::master {
namespace {

using tensor::Tensor;

// A sink that keeps what it is given, by first record.
struct KeptParts {
  std::map<int64_t, std::vector<float>> parts;
  PredictionSink sink() {
    return [this](int64_t begin, int64_t, const Tensor& rows) {
      parts[begin] = rows.ToVector();
      return Status::Ok();
    };
  }
};

TEST(PredictionCollector, HandsEachPartToTheSinkAndCountsTheRecords) {
  KeptParts kept;
  PredictionCollector c(5, kept.sink());
  ASSERT_TRUE(c.Add(3, 5, Tensor::FromVector({2, 2}, {6, 7, 8, 9})).ok());
  EXPECT_FALSE(c.complete());
  EXPECT_EQ(c.CheckComplete().message(), "predictions for 2 of 5 records received so far");
  ASSERT_TRUE(c.Add(0, 3, Tensor::FromVector({3, 2}, {0, 1, 2, 3, 4, 5})).ok());
  EXPECT_TRUE(c.complete());
  EXPECT_TRUE(c.CheckComplete().ok());
  EXPECT_EQ(kept.parts,
            (std::map<int64_t, std::vector<float>>{{0, {0, 1, 2, 3, 4, 5}}, {3, {6, 7, 8, 9}}}));
}

TEST(PredictionCollector, RejectsOutputsOfTheWrongShape) {
  KeptParts kept;
  PredictionCollector c(5, kept.sink());
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
  EXPECT_EQ(s.message(),
            "prediction data records [3, 5): predictions of shape [2, 2] float32 "
            "do not match the others' [rows, 1] float32");
  s = c.Add(4, 9, Tensor::FromVector({5, 1}, {0, 1, 2, 3, 4}));
  EXPECT_EQ(s.message(), "prediction data records [4, 9): outside the data set of 5 records");
  EXPECT_EQ(c.records_received(), 3);
  EXPECT_EQ(kept.parts.size(), 1u);  // only the part that fitted
}

TEST(PredictionCollector, KeepsTheFirstOfARangeReceivedTwice) {
  KeptParts kept;
  PredictionCollector c(1, kept.sink());
  ASSERT_TRUE(c.Add(0, 1, Tensor::FromVector({1, 1}, {1})).ok());
  ASSERT_TRUE(c.Add(0, 1, Tensor::FromVector({1, 1}, {2})).ok());
  EXPECT_EQ(c.records_received(), 1);
  EXPECT_EQ(kept.parts.at(0), std::vector<float>{1});
}

TEST(PredictionCollector, DoesNotCountAPartTheSinkCouldNotKeep) {
  int calls = 0;
  PredictionCollector c(2, [&](int64_t, int64_t, const Tensor&) {
    return ++calls == 1 ? IoError("out.csv.parts/part-x.csv: disk full") : Status::Ok();
  });
  EXPECT_EQ(c.Add(0, 2, Tensor::FromVector({2, 1}, {0, 1})).message(),
            "out.csv.parts/part-x.csv: disk full");
  EXPECT_EQ(c.records_received(), 0);
  EXPECT_TRUE(c.Add(0, 2, Tensor::FromVector({2, 1}, {0, 1})).ok());
  EXPECT_TRUE(c.complete());
}

TEST(PredictionCollector, HasNothingToCompleteWithoutPredictionData) {
  PredictionCollector c(0, nullptr);
  EXPECT_EQ(c.CheckComplete().message(), "the job has no prediction data");
}

}  // namespace
}  // namespace edl::roles::master
