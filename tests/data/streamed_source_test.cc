// StreamedSource: CSV and TFRecord files read on demand through their record
// indexes decode exactly what the in-memory readers decode, for any range;
// and every malformed or changed file is named with the record and byte.
#include "data/streamed_source.h"

#include <gtest/gtest.h>
#include <utime.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "data/categorical.h"
#include "data/examples_source.h"
#include "data/source.h"
#include "data/tf_example.h"
#include "data/tfrecord.h"
#include "tests/data/test_files.h"
#include "tests/testing/paths.h"

namespace edl::data {
namespace {

using testing_files::ExpectSameExamples;
using testing_files::TempDir;

InputSpec Spec(const std::string& json) {
  auto spec = InputSpecFromJson(json, "input");
  EDL_CHECK(spec.ok()) << spec.status().message();
  return *spec;
}

OpenOptions Streamed(LabelPolicy labels = LabelPolicy::kRequired) {
  OpenOptions o;
  o.stream = true;
  o.labels = labels;
  return o;
}

// A CSV of `rows` rows: two numeric columns, a categorical one whose quoted
// values hold delimiters, quotes and newlines, and a class label.
std::string QuotedCsv(int rows) {
  std::string text = "x,y,city,label\n";
  for (int i = 0; i < rows; ++i) {
    text += std::to_string(i * 0.5) + "," + std::to_string(-i) + ",";
    text += i % 3 == 0 ? "\"New\nYork, \"\"NY\"\"\"" : i % 3 == 1 ? "Paris" : "\"a,b\"";
    text += "," + std::to_string(i % 4) + (i % 5 == 0 ? "\r\n" : "\n");
  }
  return text;
}

const char* kCsvSpec = R"({"format": "csv", "label": "label",
    "categorical": [{"column": "city", "hash_buckets": 97}],
    "normalize": {"x": {"mean": 1.5, "std": 2.0}}})";

TEST(StreamedSource, ACsvReadsEveryRangeAsTheInMemoryReaderDoes) {
  TempDir dir;
  for (bool gzip : {false, true}) {
    const std::string path = dir.Write(gzip ? "q.csv.gz" : "q.csv", QuotedCsv(5000), gzip);
    auto memory = OpenSource(path, Spec(kCsvSpec));
    auto streamed = OpenSource(path, Spec(kCsvSpec), Streamed());
    ASSERT_TRUE(memory.ok()) << memory.status().message();
    ASSERT_TRUE(streamed.ok()) << streamed.status().message();
    EXPECT_NE(dynamic_cast<const StreamedSource*>(streamed->get()), nullptr);
    ASSERT_EQ((*streamed)->num_records(), 5000);
    EXPECT_EQ((*streamed)->inputs().size(), (*memory)->inputs().size());
    std::mt19937 rng(7);
    for (int trial = 0; trial < 40; ++trial) {
      int64_t b = rng() % 5000, e = b + rng() % 700;
      if (e > 5000) e = 5000;
      auto want = (*memory)->Read(b, e);
      auto got = (*streamed)->Read(b, e);
      ASSERT_TRUE(got.ok()) << got.status().message();
      ExpectSameExamples(*got, *want);
    }
    std::vector<int64_t> some = {4096, 17, 4999, 1024, 17};
    ExpectSameExamples(*(*streamed)->Gather(some), *(*memory)->Gather(some));
  }
}

// An Example with a numeric feature of 3 floats, an int64 and a bytes
// categorical feature, and an int64 label.
std::string ExampleBytes(int i) {
  std::map<std::string, ExampleFeature> f;
  f["dense"].kind = ExampleFeature::Kind::kFloat;
  f["dense"].floats = {static_cast<float>(i), 0.5f * i, -1.0f};
  f["count"].kind = ExampleFeature::Kind::kInt64;
  f["count"].ints = {i * 3};
  f["shop"].kind = ExampleFeature::Kind::kInt64;
  f["shop"].ints = {1000 + i % 7};
  f["city"].kind = ExampleFeature::Kind::kBytes;
  f["city"].bytes = {i % 2 ? "Paris" : "Oslo"};
  f["label"].kind = ExampleFeature::Kind::kInt64;
  f["label"].ints = {i % 2};
  return SerializeExample(f);
}

std::string TfRecords(int n, const std::function<std::string(int)>& example = ExampleBytes) {
  std::string s;
  for (int i = 0; i < n; ++i) s += TfRecordFrame(example(i));
  return s;
}

const char* kTfSpec = R"({"format": "tfrecord", "label": "label",
    "numeric": ["dense", "count"], "normalize": {"count": {"mean": 3, "std": 3}},
    "categorical": [{"column": "shop", "hash_buckets": 50},
                    {"column": "city", "vocabulary": ["Oslo", "Paris"]}]})";

TEST(StreamedSource, ATfRecordOfExamplesBecomesTheSpecsInputs) {
  TempDir dir;
  for (bool gzip : {false, true}) {
    const std::string path =
        dir.Write(gzip ? "e.tfrecord.gz" : "e.tfrecord", TfRecords(3000), gzip);
    auto s = OpenSource(path, Spec(kTfSpec), Streamed());
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_EQ((*s)->num_records(), 3000);
    ASSERT_EQ((*s)->inputs().size(), 3u);
    EXPECT_EQ((*s)->inputs()[0].shape, (tensor::Shape{4}));
    EXPECT_EQ((*s)->inputs()[1].num_ids, 50);
    EXPECT_EQ((*s)->inputs()[2].num_ids, 3);
    auto r = (*s)->Read(2041, 2044);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const float* x = r->inputs[0].f32();
    EXPECT_FLOAT_EQ(x[0], 2041.0f);
    EXPECT_FLOAT_EQ(x[1], 1020.5f);
    EXPECT_FLOAT_EQ(x[2], -1.0f);
    EXPECT_FLOAT_EQ(x[3], (2041 * 3 - 3) / 3.0f);
    // An int64 categorical hashes as its digits, as a CSV field would.
    EXPECT_EQ(r->inputs[1].i64()[0],
              static_cast<int64_t>(Fnv1a64(std::to_string(1000 + 2041 % 7)) % 50));
    EXPECT_EQ(r->inputs[2].i64()[0], 2);  // Paris: vocabulary[1] -> id 2
    EXPECT_EQ(r->inputs[2].i64()[1], 1);  // Oslo
    EXPECT_EQ(r->labels.i64()[0], 1);
    EXPECT_EQ(r->labels.i64()[1], 0);
    // Loaded whole, the same records.
    auto whole = OpenSource(path, Spec(kTfSpec));
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    ExpectSameExamples(*(*whole)->Read(2041, 2044), *r);
  }
}

// Examples encoded in Python from the wire format (tests/data/write_tfrecords.py),
// decoded by the scanner a streamed source uses.
TEST(StreamedSource, DecodesExamplesWrittenByAnIndependentEncoder) {
  TempDir dir;
  const std::string script = edl::testing::SourceDir() + "/tests/data/write_tfrecords.py";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + dir.File("py") + " 20").c_str()), 0);
  auto s = OpenSource(dir.File("py.examples.tfrecord"),
                      Spec(R"({"format": "tfrecord", "label": "label", "numeric": ["dense"],
                               "categorical": [{"column": "sometimes", "vocabulary": ["42"]}]})"),
                      Streamed());
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = (*s)->Read(0, 20);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int i = 0; i < 20; ++i) {
    EXPECT_FLOAT_EQ(r->inputs[0].f32()[i * 3], 0.5f * i);
    EXPECT_FLOAT_EQ(r->inputs[0].f32()[i * 3 + 2], 2.0f);
    EXPECT_EQ(r->inputs[1].i64()[i], i == 7 ? 0 : 1) << i;  // absent in record 7: the empty value
    EXPECT_EQ(r->labels.i64()[i], i % 2);
  }
}

TEST(StreamedSource, WithoutNumericEveryOtherFeatureOfTheFirstRecordIsNumeric) {
  TempDir dir;
  const std::string path = dir.Write("e.tfrecord", TfRecords(10));
  auto s = OpenSource(path, Spec(R"({"format": "tfrecord", "label": "label",
      "categorical": [{"column": "shop", "hash_buckets": 5}, {"column": "city", "hash_buckets": 5}]})"),
                      Streamed());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->inputs()[0].shape, (tensor::Shape{4}));  // count (1) and dense (3), by name
  auto r = (*s)->Read(2, 3);
  EXPECT_FLOAT_EQ(r->inputs[0].f32()[0], 6.0f);
  EXPECT_FLOAT_EQ(r->inputs[0].f32()[1], 2.0f);
}

std::string ReadError(const std::string& path, const InputSpec& spec, int64_t b, int64_t e) {
  auto s = OpenSource(path, spec, Streamed());
  if (!s.ok()) return "open: " + s.status().message();
  auto r = (*s)->Read(b, e);
  return r.ok() ? "ok" : r.status().message();
}

TEST(StreamedSource, AnExampleLackingAFeatureOrHoldingTheWrongKindOrLengthIsNamed) {
  TempDir dir;
  auto broken = [](int bad, auto edit) {
    return [=](int i) {
      std::map<std::string, ExampleFeature> f;
      f["dense"].kind = ExampleFeature::Kind::kFloat;
      f["dense"].floats = {1, 2, 3};
      f["label"].kind = ExampleFeature::Kind::kInt64;
      f["label"].ints = {0};
      if (i == bad) edit(f);
      return SerializeExample(f);
    };
  };
  const InputSpec spec = Spec(R"({"format": "tfrecord", "label": "label", "numeric": ["dense"]})");
  const std::string missing =
      dir.Write("missing.tfrecord", TfRecords(20, broken(7, [](auto& f) { f.erase("dense"); })));
  const size_t frame = TfRecordFrame(broken(-1, [](auto&) {})(0)).size();  // records before 7
  EXPECT_EQ(ReadError(missing, spec, 0, 20),
            missing + ": record 7 (byte " + std::to_string(7 * frame) +
                "): feature 'dense' is missing (set input.missing_value to fill absent features)");
  const std::string kind =
      dir.Write("kind.tfrecord", TfRecords(20, broken(3, [](auto& f) {
                                             f["dense"].kind = ExampleFeature::Kind::kBytes;
                                             f["dense"].bytes = {"a", "b", "c"};
                                           })));
  EXPECT_NE(ReadError(kind, spec, 0, 20).find(": record 3 (byte "), std::string::npos);
  EXPECT_NE(ReadError(kind, spec, 0, 20)
                .find("feature 'dense' is a bytes_list, expected float_list or int64_list"),
            std::string::npos);
  const std::string length = dir.Write("length.tfrecord", TfRecords(20, broken(12, [](auto& f) {
                                                                      f["dense"].floats = {1, 2};
                                                                    })));
  EXPECT_NE(ReadError(length, spec, 10, 14).find("length.tfrecord: record 12 (byte "),
            std::string::npos);
  EXPECT_NE(ReadError(length, spec, 10, 14).find("feature 'dense' has 2 values, expected 3"),
            std::string::npos);
  // Records outside the range are never decoded.
  EXPECT_EQ(ReadError(length, spec, 13, 20), "ok");
  const std::string label =
      dir.Write("label.tfrecord", TfRecords(5, broken(4, [](auto& f) { f.erase("label"); })));
  EXPECT_NE(ReadError(label, spec, 0, 5).find("record 4 (byte "), std::string::npos);
  EXPECT_NE(ReadError(label, spec, 0, 5).find("the label feature 'label' is missing"),
            std::string::npos);
}

TEST(StreamedSource, AWrongChecksumIsNamedWithItsByteOffset) {
  TempDir dir;
  std::string bytes = TfRecords(50);
  size_t at = 0;
  for (int i = 0; i < 30; ++i) at += TfRecordFrame(ExampleBytes(i)).size();
  bytes[at + kTfRecordHeader + 5] ^= 0x5a;  // inside record 30's payload
  const std::string path = dir.Write("crc.tfrecord", bytes);
  const std::string error = ReadError(path, Spec(kTfSpec), 25, 35);
  EXPECT_NE(error.find("crc.tfrecord"), std::string::npos) << error;
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
  EXPECT_EQ(ReadError(path, Spec(kTfSpec), 31, 50), "ok");
}

TEST(StreamedSource, SkipsAndCountsCorruptRecordsWhenAskedToButNotABrokenFile) {
  TempDir dir;
  // Record 30's payload has a wrong checksum; record 41 lacks its label.
  std::string bytes = TfRecords(50, [](int i) {
    if (i != 41) return ExampleBytes(i);
    std::map<std::string, ExampleFeature> f;
    f["dense"].kind = ExampleFeature::Kind::kFloat;
    f["dense"].floats = {1, 2, 3};
    f["count"].kind = ExampleFeature::Kind::kInt64;
    f["count"].ints = {1};
    f["shop"].kind = ExampleFeature::Kind::kInt64;
    f["shop"].ints = {1};
    f["city"].kind = ExampleFeature::Kind::kBytes;
    f["city"].bytes = {"Oslo"};
    return SerializeExample(f);
  });
  size_t at = 0;
  for (int i = 0; i < 30; ++i) at += TfRecordFrame(ExampleBytes(i)).size();
  bytes[at + kTfRecordHeader + 5] ^= 0x5a;
  const std::string path = dir.Write("bad.tfrecord.gz", bytes, /*gzip=*/true);
  OpenOptions skipping = Streamed();
  skipping.skip_corrupt_records = true;
  auto s = OpenSource(path, Spec(kTfSpec), skipping);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = (*s)->Read(25, 45);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->size(), 18);
  EXPECT_EQ((*s)->corrupt_records_skipped(), 2);
  // The records kept are the others, in order: dense[0] is the record number.
  std::vector<float> kept;
  for (int64_t i = 0; i < r->size(); ++i) kept.push_back(r->inputs[0].f32()[i * 4]);
  std::vector<float> want;
  for (int i = 25; i < 45; ++i) {
    if (i != 30 && i != 41) want.push_back(static_cast<float>(i));
  }
  EXPECT_EQ(kept, want);
  // A task's cursor skips the same way.
  auto cursor = (*s)->OpenCursor(28, 32);
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ((*cursor)->Next(4)->size(), 3);
  EXPECT_EQ((*s)->corrupt_records_skipped(), 3);
  // Loaded whole, too.
  OpenOptions loaded;
  loaded.skip_corrupt_records = true;
  auto whole = OpenSource(path, Spec(kTfSpec), loaded);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ((*whole)->num_records(), 48);

  // A file truncated mid-record is broken, not corrupt: still an error.
  const std::string cut = dir.Write("cut.tfrecord", TfRecords(50));
  auto c = OpenSource(cut, Spec(kTfSpec), skipping);
  ASSERT_TRUE(c.ok());
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) - 7);
  EXPECT_FALSE((*c)->Read(40, 50).ok());
}

TEST(StreamedSource, AFileTruncatedOrDeletedAfterIndexingFailsTheReadNamingIt) {
  TempDir dir;
  const std::string path = dir.Write("t.csv", QuotedCsv(3000));
  auto s = OpenSource(path, Spec(kCsvSpec), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  auto r = (*s)->Read(2900, 3000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
  std::filesystem::remove(path);
  r = (*s)->Read(0, 10);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
}

TEST(StreamedSource, AStaleIndexIsRebuiltWhenTheFileChanges) {
  TempDir dir;
  const std::string path = dir.Write("grow.csv", QuotedCsv(100));
  ASSERT_EQ((*OpenSource(path, Spec(kCsvSpec), Streamed()))->num_records(), 100);
  ASSERT_TRUE(std::filesystem::exists(dir.File(".grow.csv.edlidx")));
  dir.Write("grow.csv", QuotedCsv(250));
  struct utimbuf later = {2000000000, 2000000000};
  ASSERT_EQ(utime(path.c_str(), &later), 0);
  auto s = OpenSource(path, Spec(kCsvSpec), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->num_records(), 250);
  ASSERT_TRUE((*s)->Read(240, 250).ok());
}

TEST(StreamedSource, ADataSetOfShardsCountsRecordsPerFileAndReadsWithinOne) {
  TempDir dir;
  for (int i = 0; i < 3; ++i) {
    dir.Write("part-" + std::to_string(i) + ".tfrecord.gz", TfRecords(100 + 50 * i), true);
  }
  auto s = OpenSource(dir.File("part-*.tfrecord.gz"), Spec(kTfSpec), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->file_records(), (std::vector<int64_t>{100, 150, 200}));
  EXPECT_EQ((*s)->num_records(), 450);
  auto r = (*s)->Read(260, 270);  // records 10..19 of part-2
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FLOAT_EQ(r->inputs[0].f32()[0], 10.0f);
  auto task = ReadIntoMemory(**s, 260, 270);
  ASSERT_TRUE(task.ok());
  ExpectSameExamples(*(*task)->Read(0, 10), *r);
}

}  // namespace
}  // namespace edl::data
