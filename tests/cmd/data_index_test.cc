// `edl data index`: record indexes built ahead of a job, reused while fresh,
// and every bad input named.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "data/tf_example.h"
#include "data/tfrecord.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

TEST(DataIndex, IndexesCsvAndTfRecordFilesAndReusesFreshIndexes) {
  TempDir dir;
  const std::string script = std::string(EDL_SOURCE_DIR) + "/tests/data/write_tfrecords.py";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + dir.File("py") + " 1000").c_str()),
            0);
  std::string csv = "a,b,label\n";
  for (int i = 0; i < 500; ++i)
    csv += std::to_string(i) + ",\"x\ny\"," + std::to_string(i % 2) + "\n";
  WriteText(dir.File("t.csv"), csv);
  RunResult r = RunEdl(
      {"data", "index", dir.File("py.tfrecord"), dir.File("py.tfrecord.gz"), dir.File("t.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("py.tfrecord: 1000 records (TFRecord), "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("py.tfrecord.gz: 1000 records (TFRecord, gzip)"), std::string::npos)
      << r.out;
  // 501 rows (the header is a row too); quoted newlines do not end rows.
  EXPECT_NE(r.out.find("t.csv: 501 records (CSV)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir.File(".py.tfrecord.gz.edlidx")));
  RunResult again = RunEdl({"data", "index", dir.File("t.csv")});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("index up to date"), std::string::npos) << again.out;
}

TEST(DataIndex, NamesTheFileAndWhatIsWrong) {
  TempDir dir;
  WriteText(dir.File("x.bin"), "whatever");
  RunResult unknown = RunEdl({"data", "index", dir.File("x.bin")});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find(dir.File("x.bin") + ": cannot tell its format"), std::string::npos)
      << unknown.err;
  WriteText(dir.File("a.csv"), "id,name,label\n1,first,2\n");
  RunResult wrong = RunEdl({"data", "index", "--format=tfrecord", dir.File("a.csv")});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("record 0 at byte 0: bad length checksum"), std::string::npos)
      << wrong.err;
  RunResult missing = RunEdl({"data", "index", dir.File("nope.csv")});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nope.csv"), std::string::npos) << missing.err;
}

TEST(DataInspect, ShowsTheFeaturesOfTfExamplesAndAFewRecords) {
  TempDir dir;
  std::string file;
  for (int i = 0; i < 20; ++i) {
    std::map<std::string, data::ExampleFeature> e;
    e["label"].kind = data::ExampleFeature::Kind::kInt64;
    e["label"].ints = {i % 2};
    e["dense"].kind = data::ExampleFeature::Kind::kFloat;
    e["dense"].floats = {0.5f * i, 1.0f, 2.0f};
    e["words"].kind = data::ExampleFeature::Kind::kBytes;
    for (int w = 0; w < i % 4 + 1; ++w) e["words"].bytes.push_back("w" + std::to_string(w));
    if (i != 7) {
      e["sometimes"].kind = data::ExampleFeature::Kind::kInt64;
      e["sometimes"].ints = {42};
    }
    file += data::TfRecordFrame(data::SerializeExample(e));
  }
  WriteText(dir.File("ex.tfrecord"), file);
  RunResult r = RunEdl({"data", "inspect", dir.File("ex.tfrecord"), "--records=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TFRecord, 20 records"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("features (tf.train.Example) in the first 20 record(s)"), std::string::npos)
      << r.out;
  auto row = [&](const std::string& name, const std::string& rest) {
    std::string line = "  " + name;
    line.resize(31, ' ');
    EXPECT_NE(r.out.find(line + rest), std::string::npos) << line + rest << "\n" << r.out;
  };
  row("dense", "float_list  3         20/20");
  row("label", "int64_list  1         20/20");
  row("sometimes", "int64_list  1         19/20");
  row("words", "bytes_list  1-4       20/20");
  EXPECT_NE(r.out.find("record 1:\n  dense: [0.5, 1, 2]\n  label: [1]\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("words: [\"w0\", \"w1\"]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("record 2:"), std::string::npos) << r.out;
}

// Examples encoded by hand in Python from the protobuf wire format
// (tests/data/write_tfrecords.py) decode the same.
TEST(DataInspect, ReadsExamplesWrittenByAnIndependentEncoder) {
  TempDir dir;
  const std::string script = std::string(EDL_SOURCE_DIR) + "/tests/data/write_tfrecords.py";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + dir.File("py") + " 20").c_str()), 0);
  RunResult r = RunEdl({"data", "inspect", dir.File("py.examples.tfrecord"), "--records=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  sometimes                    int64_list  1         19/20"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  words                        bytes_list  1-4       20/20"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("record 1:\n  dense: [0.5, 1, 2]\n  label: [1]\n  sometimes: [42]\n"
                       "  words: [\"w0\", \"w1\"]\n"),
            std::string::npos)
      << r.out;
}

TEST(DataInspect, NamesARecordThatIsNotAnExample) {
  TempDir dir;
  // An Example with no features (2 bytes: an empty `features`) framed in 18
  // bytes, then 3 bytes that are no Example.
  WriteText(dir.File("bad.tfrecord"),
            data::TfRecordFrame(data::SerializeExample({})) + data::TfRecordFrame("\xff\xff\xff"));
  RunResult r = RunEdl({"data", "inspect", dir.File("bad.tfrecord")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir.File("bad.tfrecord") + ": record 1 at byte 18: not a serialized "
                                                  "tf.train.Example"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace edl::testing
