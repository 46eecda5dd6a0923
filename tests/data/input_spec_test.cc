#include "data/input_spec.h"

#include "data/categorical.h"
#include "gtest/gtest.h"

namespace edl::data {
namespace {

std::string Error(const std::string& json) {
  auto spec = InputSpecFromJson(json, "m.json: input");
  return spec.ok() ? "parsed" : spec.status().message();
}

TEST(InputSpec, DefaultsToAutoFormatWithImageScaleAndLastColumnLabel) {
  auto spec = InputSpecFromJson("{}", "w");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->format, DataFormat::kAuto);
  EXPECT_DOUBLE_EQ(spec->idx.scale, 1.0 / 255);
  EXPECT_TRUE(spec->csv.has_label);
  EXPECT_TRUE(spec->csv.label.by_index);
  EXPECT_EQ(spec->csv.label.index, -1);
  EXPECT_TRUE(spec->csv.numeric_all);
}

TEST(InputSpec, ParsesAnIdxSpec) {
  auto spec = InputSpecFromJson(
      R"({"format": "idx", "scale": 0.5, "offset": -1, "shape": [28, 28, 1]})", "w");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->format, DataFormat::kIdx);
  EXPECT_EQ(spec->idx.scale, 0.5);
  EXPECT_EQ(spec->idx.offset, -1);
  EXPECT_EQ(spec->idx.shape, (std::vector<int64_t>{28, 28, 1}));
}

TEST(InputSpec, ParsesACsvSpecAndInfersTheFormatFromItsFields) {
  auto spec = InputSpecFromJson(R"({
      "delimiter": ";", "header": false, "skip_rows": 2, "label": "y",
      "label_type": "float", "numeric": ["age", 3], "missing_value": 0,
      "normalize": {"age": {"mean": 30, "std": 10}},
      "categorical": [{"column": "city", "hash_buckets": 100},
                      {"column": -2, "vocabulary": ["a", "b"]}],
      "categorical_layout": "concat_with_offsets"})",
                                "w");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const CsvSpec& c = spec->csv;
  EXPECT_EQ(spec->format, DataFormat::kCsv);
  EXPECT_EQ(c.delimiter, ';');
  EXPECT_FALSE(c.header);
  EXPECT_EQ(c.skip_rows, 2);
  EXPECT_EQ(c.label.name, "y");
  EXPECT_EQ(c.label_type, LabelType::kFloat);
  ASSERT_EQ(c.numeric.size(), 2u);
  EXPECT_FALSE(c.numeric_all);
  EXPECT_EQ(c.numeric[1].index, 3);
  EXPECT_EQ(c.normalize.at("age").std, 10);
  EXPECT_EQ(*c.missing_value, 0);
  ASSERT_EQ(c.categorical.size(), 2u);
  EXPECT_EQ(c.categorical[0].NumIds(), 100);
  EXPECT_EQ(c.categorical[1].column.index, -2);
  EXPECT_EQ(c.categorical[1].NumIds(), 3);
  EXPECT_EQ(c.categorical_layout, CategoricalLayout::kConcatWithOffsets);
}

TEST(InputSpec, RoundTripsThroughJson) {
  const char* json = R"({"label": null, "numeric": ["a"],
      "normalize": {"a": {"mean": 1.5, "std": 2}},
      "categorical": [{"column": 0, "vocabulary": ["x"]}]})";
  auto spec = InputSpecFromJson(json, "w");
  ASSERT_TRUE(spec.ok());
  auto again = InputSpecFromJson(InputSpecToJson(*spec), "w");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(InputSpecToJson(*again), InputSpecToJson(*spec));
  EXPECT_FALSE(again->csv.has_label);
  EXPECT_EQ(again->csv.categorical[0].vocabulary, std::vector<std::string>{"x"});
}

TEST(InputSpec, ParsesIdentityColumnsAndTheConcatLayoutAndWritesThemBack) {
  auto spec = InputSpecFromJson(R"({"categorical": [{"column": "t0", "num_buckets": 20}],
                                    "categorical_layout": "concat"})",
                                "w");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->csv.categorical[0].num_buckets, 20);
  EXPECT_EQ(spec->csv.categorical[0].NumIds(), 20);
  EXPECT_EQ(spec->csv.categorical_layout, CategoricalLayout::kConcat);
  auto again = InputSpecFromJson(InputSpecToJson(*spec), "again");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->csv.categorical[0].num_buckets, 20);
  EXPECT_EQ(again->csv.categorical_layout, CategoricalLayout::kConcat);
}

TEST(InputSpec, BucketizesANumericColumnByItsBoundaries) {
  auto spec = InputSpecFromJson(
      R"({"categorical": [{"column": "age", "boundaries": [18, 30.5, 65]}]})", "w");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const CategoricalColumn& c = spec->csv.categorical[0];
  EXPECT_EQ(c.NumIds(), 4);
  CategoricalEncoder e(c);
  EXPECT_EQ(e.Id("3"), 0);
  EXPECT_EQ(e.Id("18"), 1);  // a boundary starts its bucket
  EXPECT_EQ(e.Id(" 30.4"), 1);
  EXPECT_EQ(e.Id("30.5"), 2);
  EXPECT_EQ(e.Id("1e9"), 3);
  EXPECT_EQ(e.Id("old"), -1);
  EXPECT_EQ(e.Id(""), -1);
  EXPECT_EQ(e.RefusalMessage("old"), "cannot parse 'old' as a number");
  auto again = InputSpecFromJson(InputSpecToJson(*spec), "again");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->csv.categorical[0].boundaries, c.boundaries);
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "boundaries": [2, 1]}]})"),
            "m.json: input.categorical[0].boundaries: must increase strictly, got [2,1]");
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "boundaries": []}]})"),
            "m.json: input.categorical[0].boundaries: must be a non-empty list of numbers, got []");
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "boundaries": [1], "hash_buckets": 3}]})"),
            "m.json: input.categorical[0]: needs exactly one of \"hash_buckets\", \"num_buckets\", "
            "\"vocabulary\" and \"boundaries\"");
}

TEST(InputSpec, RejectsUnknownFieldsNamingWhereAndTheField) {
  EXPECT_EQ(Error(R"({"scael": 1})").rfind("m.json: input.scael: unknown field (expected", 0), 0u);
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "buckets": 3}]})"),
            "m.json: input.categorical[0].buckets: unknown field (expected column, "
            "hash_buckets, num_buckets, vocabulary or boundaries)");
  EXPECT_EQ(Error(R"({"normalize": {"a": {"mean": 1, "sd": 2}}})"),
            "m.json: input.normalize.a.sd: unknown field (expected mean or std)");
}

TEST(InputSpec, RejectsBadValues) {
  EXPECT_EQ(Error("[1]"), "m.json: input: must be a JSON object, got [1]");
  EXPECT_EQ(Error("{").rfind("m.json: input: invalid JSON: ", 0), 0u);
  EXPECT_EQ(Error(R"({"format": "parquet"})"),
            "m.json: input.format: must be \"idx\", \"csv\", \"tfrecord\", \"images\" or "
            "\"auto\", got \"parquet\"");
  EXPECT_EQ(Error(R"({"scale": "big"})"), "m.json: input.scale: must be a number, got \"big\"");
  EXPECT_EQ(Error(R"({"shape": [28, 0]})"),
            "m.json: input.shape: dimensions must be positive, got [28,0]");
  EXPECT_EQ(Error(R"({"delimiter": ";;"})"),
            "m.json: input.delimiter: must be one character other than a quote or "
            "line end, got \";;\"");
  EXPECT_EQ(Error(R"({"skip_rows": -1})"), "m.json: input.skip_rows: must be >= 0, got -1");
  EXPECT_EQ(Error(R"({"label": 1.5})"),
            "m.json: input.label: must be a column name or a 0-based column "
            "index, got 1.5");
  EXPECT_EQ(Error(R"({"label_type": "bool"})"),
            "m.json: input.label_type: must be \"int\" (classes) or \"float\" "
            "(regression), got \"bool\"");
  EXPECT_EQ(Error(R"({"normalize": {"a": {"std": 0}}})"),
            "m.json: input.normalize.a.std: must be > 0, got 0");
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a"}]})"),
            "m.json: input.categorical[0]: needs exactly one of \"hash_buckets\", "
            "\"num_buckets\", \"vocabulary\" and \"boundaries\"");
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "num_buckets": 4, "hash_buckets": 3}]})"),
            "m.json: input.categorical[0]: needs exactly one of \"hash_buckets\", "
            "\"num_buckets\", \"vocabulary\" and \"boundaries\"");
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "num_buckets": -1}]})"),
            "m.json: input.categorical[0].num_buckets: must be positive, got -1");
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "hash_buckets": 0}]})"),
            "m.json: input.categorical[0].hash_buckets: must be positive, got 0");
  EXPECT_EQ(Error(R"({"categorical": [{"column": "a", "vocabulary": ["x", "x"]}]})"),
            "m.json: input.categorical[0].vocabulary: \"x\" appears twice");
  EXPECT_EQ(Error(R"({"categorical": [{"hash_buckets": 3}]})"),
            "m.json: input.categorical[0]: missing \"column\"");
  EXPECT_EQ(Error(R"({"categorical_layout": "stacked"})"),
            "m.json: input.categorical_layout: must be \"separate\", "
            "\"concat_with_offsets\" or \"concat\", got \"stacked\"");
  EXPECT_EQ(Error(R"({"label_type": "float", "label_vocabulary": ["a"]})"),
            "m.json: input.label_vocabulary: needs label_type \"int\"");
}

TEST(InputSpec, RejectsFieldsOfTheOtherFormat) {
  EXPECT_EQ(Error(R"({"format": "idx", "label": "y"})"),
            "m.json: input.label: is a CSV field, but format is \"idx\"");
  EXPECT_EQ(Error(R"({"format": "csv", "scale": 1})"),
            "m.json: input.scale: is an IDX field, but format is \"csv\"");
  std::string mixed = Error(R"({"scale": 1, "label": "y"})");
  EXPECT_NE(mixed.find("mixes IDX field"), std::string::npos) << mixed;
}

}  // namespace
}  // namespace edl::data
