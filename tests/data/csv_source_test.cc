#include "data/csv_source.h"

#include <cmath>

#include "data/categorical.h"
#include "gtest/gtest.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

const std::string kSklearn = EDL_SKLEARN_DATA;

InputSpec Spec(const std::string& json) {
  auto spec = InputSpecFromJson(json, "test");
  EDL_CHECK(spec.ok()) << spec.status().ToString();
  return *spec;
}

// sklearn's CSVs start with "n_samples,n_features,class names..." and have
// no header; the label is the last column.
const char* kSklearnSpec = R"({"format": "csv", "skip_rows": 1, "header": false})";

std::unique_ptr<Source> Open(const std::string& path, const InputSpec& spec,
                             LabelPolicy labels = LabelPolicy::kRequired) {
  auto s = OpenSource(path, spec, labels);
  EDL_CHECK(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::string OpenError(const std::string& path, const InputSpec& spec,
                      LabelPolicy labels = LabelPolicy::kRequired) {
  auto s = OpenSource(path, spec, labels);
  return s.ok() ? "opened" : s.status().message();
}

TEST(CsvSource, ReadsIrisWithTheSklearnHeaderSkipped) {
  auto s = Open(kSklearn + "/iris.csv", Spec(kSklearnSpec));
  EXPECT_EQ(s->num_records(), 150);
  ASSERT_EQ(s->inputs().size(), 1u);
  EXPECT_EQ(s->inputs()[0].name, "numeric");
  EXPECT_EQ(s->inputs()[0].shape, (tensor::Shape{4}));
  auto all = s->Read(0, 150);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->inputs[0].shape(), (tensor::Shape{150, 4}));
  EXPECT_EQ(std::vector<float>(all->inputs[0].f32(), all->inputs[0].f32() + 4),
            (std::vector<float>{5.1f, 3.5f, 1.4f, 0.2f}));
  EXPECT_EQ(all->labels.dtype(), tensor::DType::kInt64);
  std::vector<int> counts(3);
  for (int64_t i = 0; i < 150; ++i) counts.at(all->labels.i64()[i])++;
  EXPECT_EQ(counts, (std::vector<int>{50, 50, 50}));
}

TEST(CsvSource, ReadsBreastCancerAndWine) {
  auto cancer = Open(kSklearn + "/breast_cancer.csv", Spec(kSklearnSpec));
  EXPECT_EQ(cancer->num_records(), 569);
  EXPECT_EQ(cancer->inputs()[0].shape, (tensor::Shape{30}));
  auto c = cancer->Read(0, 569);
  ASSERT_TRUE(c.ok());
  int positives = 0;
  for (int64_t i = 0; i < 569; ++i) positives += c->labels.i64()[i];
  EXPECT_EQ(positives, 357);  // benign

  auto wine = Open(kSklearn + "/wine_data.csv", Spec(kSklearnSpec));
  EXPECT_EQ(wine->num_records(), 178);
  EXPECT_EQ(wine->inputs()[0].shape, (tensor::Shape{13}));
  auto last = wine->Read(177, 178);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->labels.i64()[0], 2);
}

TEST(CsvSource, ReadsAGzipCsvWithoutAHeader) {
  auto s = Open(kSklearn + "/digits.csv.gz", Spec(R"({"header": false})"));
  EXPECT_EQ(s->num_records(), 1797);
  EXPECT_EQ(s->inputs()[0].shape, (tensor::Shape{64}));
  EXPECT_EQ(s->Read(0, 2)->labels.ToVector(), (std::vector<float>{0, 1}));
}

TEST(CsvSource, NormalizesSelectedNumericColumnsByName) {
  auto s = Open(kSklearn + "/iris.csv", Spec(R"({"skip_rows": 1, "header": false, "label": 4,
                         "numeric": [2, "0"], "normalize": {"0": {"mean": 5, "std": 0.5}}})"));
  auto first = s->Read(0, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_FLOAT_EQ(first->inputs[0].f32()[0], 1.4f);
  EXPECT_FLOAT_EQ(first->inputs[0].f32()[1], 0.2f);  // (5.1 - 5) / 0.5
}

TEST(CsvSource, ReadsFloatLabelsForRegression) {
  auto s = Open(kSklearn + "/boston_house_prices.csv",
                Spec(R"({"skip_rows": 1, "label": "MEDV", "label_type": "float"})"));
  EXPECT_EQ(s->num_records(), 506);
  EXPECT_EQ(s->inputs()[0].shape, (tensor::Shape{13}));
  auto first = s->Read(0, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->labels.dtype(), tensor::DType::kFloat32);
  EXPECT_FLOAT_EQ(first->labels.f32()[0], 24.0f);
}

const char* kPeople =
    "age,\"city, state\",color,label\n"
    "30,\"Paris, TX\",red,1\n"
    "41.5,Oslo,green,0\n"
    "  7 ,\"Paris, TX\",blue,1\n";

TEST(CsvSource, EncodesCategoricalsAsSeparateIdInputs) {
  TempDir dir;
  std::string p = dir.Write("people.csv", kPeople);
  auto s = Open(p, Spec(R"({"categorical": [
      {"column": "city, state", "hash_buckets": 1000},
      {"column": "color", "vocabulary": ["red", "green"]}]})"));
  ASSERT_EQ(s->inputs().size(), 3u);
  EXPECT_EQ(s->inputs()[0].shape, (tensor::Shape{1}));
  EXPECT_EQ(s->inputs()[1].name, "city, state");
  EXPECT_EQ(s->inputs()[1].num_ids, 1000);
  EXPECT_EQ(s->inputs()[2].num_ids, 3);
  auto b = s->Read(0, 3);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->inputs[0].ToVector(), (std::vector<float>{30, 41.5f, 7}));
  EXPECT_EQ(b->inputs[1].shape(), (tensor::Shape{3}));
  const int64_t* city = b->inputs[1].i64();
  EXPECT_EQ(city[0], static_cast<int64_t>(Fnv1a64("Paris, TX") % 1000));
  EXPECT_EQ(city[1], static_cast<int64_t>(Fnv1a64("Oslo") % 1000));
  EXPECT_EQ(city[2], city[0]);
  EXPECT_EQ(b->inputs[2].ToVector(), (std::vector<float>{1, 2, 0}));  // blue is OOV
  EXPECT_EQ(b->labels.ToVector(), (std::vector<float>{1, 0, 1}));
}

TEST(CsvSource, ConcatenatesCategoricalsWithIdOffsets) {
  TempDir dir;
  std::string p = dir.Write("people.csv", kPeople);
  auto s = Open(p, Spec(R"({"categorical_layout": "concat_with_offsets",
      "categorical": [{"column": "color", "vocabulary": ["red", "green"]},
                      {"column": 1, "hash_buckets": 10}]})"));
  ASSERT_EQ(s->inputs().size(), 2u);
  EXPECT_EQ(s->inputs()[1].name, "categorical");
  EXPECT_EQ(s->inputs()[1].shape, (tensor::Shape{2}));
  EXPECT_EQ(s->inputs()[1].num_ids, 13);
  auto b = s->Read(1, 2);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->inputs[1].shape(), (tensor::Shape{1, 2}));
  EXPECT_EQ(b->inputs[1].i64()[0], 2);
  EXPECT_EQ(b->inputs[1].i64()[1], 3 + static_cast<int64_t>(Fnv1a64("Oslo") % 10));
}

// Identity columns (the value is the id) in one [N, k] input, ids as they
// are; a value that is not an integer id in range names its row and column.
TEST(CsvSource, ReadsIdentityColumnsAsIdsAndRefusesValuesOutOfRange) {
  TempDir dir;
  std::string p = dir.Write("ids.csv", "a,b,label\n3,0,1\n 4 ,7,0\n");
  const char* spec = R"({"categorical_layout": "concat",
      "categorical": [{"column": "a", "num_buckets": 5}, {"column": "b", "num_buckets": 8}]})";
  auto s = Open(p, Spec(spec));
  ASSERT_EQ(s->inputs().size(), 1u);
  EXPECT_EQ(s->inputs()[0].shape, (tensor::Shape{2}));
  EXPECT_EQ(s->inputs()[0].num_ids, 8);
  auto b = s->Read(0, 2);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->inputs[0].ToVector(), (std::vector<float>{3, 0, 4, 7}));
  for (const char* bad : {"5", "-1", "2.0", "x", ""}) {
    SCOPED_TRACE(bad);
    std::string q = dir.Write("bad.csv", std::string("a,b,label\n1,1,0\n") + bad + ",1,0\n");
    auto r = OpenSource(q, Spec(spec));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), q + ":3: column 'a': '" + bad + "' is not an id in [0, 5)");
  }
}

TEST(CsvSource, MapsStringLabelsThroughALabelVocabulary) {
  TempDir dir;
  std::string p = dir.Write("s.csv", "x,y\n1,no\n2,yes\n3,maybe\n");
  auto s = OpenSource(p, Spec(R"({"label": "y", "label_vocabulary": ["no", "yes"]})"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), p + ":4: label 'maybe' is not in input.label_vocabulary");
  p = dir.Write("t.csv", "x,y\n1,no\n2,yes\n");
  auto t = Open(p, Spec(R"({"label": "y", "label_vocabulary": ["no", "yes"]})"));
  EXPECT_EQ(t->Read(0, 2)->labels.ToVector(), (std::vector<float>{0, 1}));
}

TEST(CsvSource, ReadsPredictionDataWithoutTheLabelColumn) {
  TempDir dir;
  std::string p = dir.Write("p.csv", "a,b\n1,2\n3,4\n");
  const char* spec = R"({"label": "target"})";
  EXPECT_EQ(OpenError(p, Spec(spec)),
            p + ": label column 'target' is not in the header (columns: a, b)");
  auto s = Open(p, Spec(spec), LabelPolicy::kIfPresent);
  EXPECT_FALSE(s->has_labels());
  auto b = s->Read(0, 2);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->labels.defined());
  EXPECT_EQ(b->inputs[0].ToVector(), (std::vector<float>{1, 2, 3, 4}));
  auto unlabeled = Open(p, Spec(R"({"label": null})"));
  EXPECT_EQ(unlabeled->inputs()[0].shape, (tensor::Shape{2}));
}

TEST(CsvSource, FillsEmptyNumericFieldsOnlyWhenAskedTo) {
  TempDir dir;
  std::string p = dir.Write("m.csv", "a,b,label\n1,,0\n");
  EXPECT_EQ(OpenError(p, InputSpec()),
            p + ":2: column 'b': empty value (set input.missing_value to fill "
                "empty fields)");
  auto s = Open(p, Spec(R"({"missing_value": -1})"));
  EXPECT_EQ(s->Read(0, 1)->inputs[0].ToVector(), (std::vector<float>{1, -1}));
}

TEST(CsvSource, ReportsARowWithTheWrongNumberOfFields) {
  TempDir dir;
  std::string p = dir.Write("f.csv", "a,b,c,d,label\n1,2,3,4,0\n\n1,2,3,0\n");
  EXPECT_EQ(OpenError(p, InputSpec()), p + ":4: expected 5 fields, got 4");
}

TEST(CsvSource, ReportsANonNumericValueWithLineAndColumn) {
  TempDir dir;
  std::string p = dir.Write("n.csv", "age,label\n3,0\n\"abc\",1\n");
  EXPECT_EQ(OpenError(p, InputSpec()), p + ":3: column 'age': cannot parse 'abc' as a number");
  p = dir.Write("nan.csv", "age,label\nnan,1\n");
  EXPECT_EQ(OpenError(p, InputSpec()), p + ":2: column 'age': cannot parse 'nan' as a number");
  p = dir.Write("partial.csv", "age,label\n12abc,1\n");
  EXPECT_EQ(OpenError(p, InputSpec()), p + ":2: column 'age': cannot parse '12abc' as a number");
}

TEST(CsvSource, ReportsABadIntegerLabel) {
  TempDir dir;
  std::string p = dir.Write("l.csv", "a,label\n1,0\n2,1.5\n");
  EXPECT_EQ(OpenError(p, InputSpec()),
            p + ":3: label column 'label': cannot parse '1.5' as an integer class "
                "(use "
                "label_type \"float\" for regression or label_vocabulary for names)");
  p = dir.Write("f.csv", "a,label\n1,x\n");
  EXPECT_EQ(OpenError(p, Spec(R"({"label_type": "float"})")),
            p + ":2: column 'label': cannot parse 'x' as a number");
}

TEST(CsvSource, ReportsBrokenQuotingWithTheLine) {
  TempDir dir;
  std::string p = dir.Write("q.csv", "a,label\n1,0\n\"2,1\n3,0\n");
  EXPECT_EQ(OpenError(p, InputSpec()), p + ":3: unterminated quoted field 1");
}

TEST(CsvSource, ReportsSpecColumnsTheFileLacks) {
  TempDir dir;
  std::string p = dir.Write("c.csv", "a,b,label\n1,2,0\n");
  EXPECT_EQ(OpenError(p, Spec(R"({"numeric": ["a", "zz"]})")),
            p + ": numeric column 'zz' is not in the header (columns: a, b, label)");
  EXPECT_EQ(OpenError(p, Spec(R"({"label": 7})")),
            p + ": label column #7 is out of range: the file has 3 columns");
  EXPECT_EQ(OpenError(p, Spec(R"({"numeric": ["a", "label"]})")),
            p + ": column 'label' is used as the label and as a numeric");
  EXPECT_EQ(OpenError(p, Spec(R"({"normalize": {"q": {"mean": 0, "std": 1}}})")),
            p + ": input.normalize names 'q', which is not a numeric column");
  EXPECT_EQ(OpenError(p, Spec(R"({"column_names": ["x", "y"]})")),
            p + ":1: the header has 3 columns but input.column_names names 2");
  std::string dup = dir.Write("d.csv", "a,a,label\n1,2,0\n");
  EXPECT_EQ(OpenError(dup, Spec(R"({"numeric": ["a"]})")),
            dup + ": numeric column 'a' appears twice");
  std::string empty = dir.Write("e.csv", "");
  EXPECT_EQ(OpenError(empty, InputSpec()), empty + ": no header row (the file is empty)");
  std::string only_label = dir.Write("o.csv", "label\n1\n");
  EXPECT_EQ(OpenError(only_label, InputSpec()), only_label + ": no input columns (only a label)");
}

TEST(CsvSource, AcceptsAHeaderOnlyFileAsZeroRecords) {
  TempDir dir;
  auto s = Open(dir.Write("h.csv", "a,label\n"), InputSpec());
  EXPECT_EQ(s->num_records(), 0);
  EXPECT_EQ(s->Read(0, 0)->size(), 0);
}

TEST(CsvSource, NamesColumnsFromColumnNames) {
  TempDir dir;
  std::string p = dir.Write("n.tsv", "1\t2\t0\n3\t4\t1\n");
  auto s = Open(p, Spec(R"({"delimiter": "\t", "header": false,
                            "column_names": ["u", "v", "y"], "label": "y",
                            "numeric": ["v"]})"));
  auto csv = dynamic_cast<const ColumnSource*>(s.get());
  ASSERT_NE(csv, nullptr);
  EXPECT_EQ(csv->column_names(), (std::vector<std::string>{"u", "v", "y"}));
  EXPECT_EQ(s->Read(0, 2)->inputs[0].ToVector(), (std::vector<float>{2, 4}));
}

}  // namespace
}  // namespace edl::data
