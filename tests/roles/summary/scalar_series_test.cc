// Bounded series of scalars (roles/summary/scalar_series.h).
#include "roles/summary/scalar_series.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace edl::roles::summary {
namespace {

TEST(ScalarSeries, KeepsEverythingUntilFull) {
  ScalarSeries s(8);
  for (int i = 0; i < 5; ++i) s.Add("loss", i * 10, 100.0 + i, 1.0 / (i + 1));
  auto points = s.Points("loss");
  ASSERT_EQ(points.size(), 5u);
  EXPECT_EQ(points[3].step, 30);
  EXPECT_DOUBLE_EQ(points[3].wall_time, 103.0);
  EXPECT_DOUBLE_EQ(points[3].value, 0.25);
  EXPECT_TRUE(s.Points("accuracy").empty());
}

TEST(ScalarSeries, AThousandTimesItsCapacityStaysBoundedEvenlySpacedAndCurrent) {
  ScalarSeries s(16);
  const int n = 16000;
  for (int i = 0; i < n; ++i) s.Add("loss", i, i, i);
  auto points = s.Points("loss");
  ASSERT_LE(points.size(), 17u);  // the kept ones and the newest
  ASSERT_GE(points.size(), 9u);   // never less than half full after a halving
  EXPECT_EQ(points.front().step, 0);
  EXPECT_EQ(points.back().step, n - 1);  // the current value is always there
  const int64_t gap = points[1].step - points[0].step;
  EXPECT_GE(gap, n / 16 / 2);
  for (size_t k = 2; k + 1 < points.size(); ++k) {
    EXPECT_EQ(points[k].step - points[k - 1].step, gap) << k;  // evenly spaced
  }
  // Another tag is bounded on its own.
  s.Add("workers", 5, 5, 2);
  EXPECT_EQ(s.Points("workers").size(), 1u);
}

TEST(ScalarSeries, JsonListsEveryTagAsStepTimeValueTriples) {
  ScalarSeries s(4);
  s.Add("train/loss", 1, 10.5, 0.5);
  s.Add("job/workers", 1, 10.5, 2);
  auto j = s.ToJson();
  EXPECT_EQ(j["capacity"], 4);
  ASSERT_TRUE(j["series"].contains("train/loss"));
  EXPECT_EQ(j["series"]["train/loss"][0][0], 1);
  EXPECT_DOUBLE_EQ(j["series"]["train/loss"][0][1].get<double>(), 10.5);
  EXPECT_DOUBLE_EQ(j["series"]["train/loss"][0][2].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["series"]["job/workers"][0][2].get<double>(), 2);
}

}  // namespace
}  // namespace edl::roles::summary
