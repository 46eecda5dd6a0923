#include "data/planted_model.h"

#include <cmath>

#include "data/csv_source.h"
#include "data/input_spec.h"
#include "gtest/gtest.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::ReadRaw;
using testing_files::TempDir;

PlantedOptions Small() {
  PlantedOptions o;
  o.num_rows = 2000;
  o.num_numeric = 3;
  o.cardinalities = {5, 50};
  o.interaction_std = 0.5;
  return o;
}

TEST(PlantedModel, IsDeterministicForTheSameSeeds) {
  TempDir dir;
  auto a = WritePlantedCsv(dir.File("a.csv"), Small());
  auto b = WritePlantedCsv(dir.File("b.csv"), Small());
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  EXPECT_EQ(ReadRaw(dir.File("a.csv")), ReadRaw(dir.File("b.csv")));
  EXPECT_EQ(a->planted_auc, b->planted_auc);
  EXPECT_EQ(a->input_spec_json, b->input_spec_json);
}

TEST(PlantedModel, RowSeedChangesRowsButNotTheModel) {
  TempDir dir;
  PlantedOptions other = Small();
  other.row_seed = 2;
  auto a = WritePlantedCsv(dir.File("a.csv"), Small());
  auto b = WritePlantedCsv(dir.File("b.csv"), other);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(ReadRaw(dir.File("a.csv")), ReadRaw(dir.File("b.csv")));
  EXPECT_EQ(a->input_spec_json,
            b->input_spec_json);  // same means/stds/vocabularies
  other.model_seed = 2;
  auto c = WritePlantedCsv(dir.File("c.csv"), other);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->input_spec_json, b->input_spec_json);
}

TEST(PlantedModel, ThePlantedModelPredictsItsLabelsWell) {
  TempDir dir;
  auto stats = WritePlantedCsv(dir.File("p.csv"), Small());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->num_rows, 2000);
  EXPECT_GT(stats->planted_auc, 0.75);
  EXPECT_LT(stats->planted_auc, 1.0);
  EXPECT_GT(stats->positive_rate, 0.05);
  EXPECT_LT(stats->positive_rate, 0.95);
  EXPECT_LT(stats->planted_log_loss, std::log(2.0));
}

TEST(PlantedModel, ItsSpecReadsTheFileWithStandardizedNumericsAndOffsetIds) {
  TempDir dir;
  auto stats = WritePlantedCsv(dir.File("p.csv"), Small());
  ASSERT_TRUE(stats.ok());
  auto spec = InputSpecFromJson(stats->input_spec_json, "planted");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto source = OpenSource(dir.File("p.csv"), *spec);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const Source& s = **source;
  ASSERT_EQ(s.inputs().size(), 2u);
  EXPECT_EQ(s.inputs()[0].shape, (tensor::Shape{3}));
  EXPECT_EQ(s.inputs()[1].shape, (tensor::Shape{2}));
  EXPECT_EQ(s.inputs()[1].num_ids, 6 + 51);
  auto all = s.Read(0, 2000);
  ASSERT_TRUE(all.ok());
  for (int j = 0; j < 3; ++j) {  // standardized: mean ~0, variance ~1
    double sum = 0, sq = 0;
    for (int r = 0; r < 2000; ++r) {
      double x = all->inputs[0].f32()[r * 3 + j];
      sum += x;
      sq += x * x;
    }
    EXPECT_NEAR(sum / 2000, 0.0, 0.1);
    EXPECT_NEAR(sq / 2000, 1.0, 0.1);
  }
  for (int r = 0; r < 2000; ++r) {
    int64_t c0 = all->inputs[1].i64()[r * 2], c1 = all->inputs[1].i64()[r * 2 + 1];
    ASSERT_GE(c0, 1);  // never out of vocabulary
    ASSERT_LT(c0, 6);
    ASSERT_GE(c1, 6 + 1);
    ASSERT_LT(c1, 57);
  }
}

TEST(PlantedModel, RejectsBadOptionsAndUnwritablePaths) {
  TempDir dir;
  PlantedOptions o = Small();
  o.num_rows = 0;
  EXPECT_FALSE(WritePlantedCsv(dir.File("x.csv"), o).ok());
  auto unwritable = WritePlantedCsv("/nonexistent/dir/x.csv", Small());
  ASSERT_FALSE(unwritable.ok());
  EXPECT_EQ(unwritable.status().message(), "/nonexistent/dir/x.csv: cannot open for writing");
}

TEST(RocAuc, CountsTiesAsHalfAndHandlesOneClass) {
  EXPECT_DOUBLE_EQ(RocAuc({0.1, 0.4, 0.35, 0.8}, {0, 0, 1, 1}), 0.75);
  EXPECT_DOUBLE_EQ(RocAuc({0.5, 0.5}, {0, 1}), 0.5);
  EXPECT_DOUBLE_EQ(RocAuc({0.9, 0.1}, {0, 1}), 0.0);
  EXPECT_DOUBLE_EQ(RocAuc({0.3, 0.2}, {1, 1}), 0.5);
}

}  // namespace
}  // namespace edl::data
