// `edl data index`: record indexes built ahead of a job, reused while fresh,
// and every bad input named; with --verify, every record checked and no
// index written for a file with a bad one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "data/tf_example.h"
#include "data/tfrecord.h"
#include "tests/testing/paths.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

TEST(DataIndex, IndexesCsvAndTfRecordFilesAndReusesFreshIndexes) {
  TempDir dir;
  const std::string script = edl::testing::SourceDir() + "/tests/data/write_tfrecords.py";
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

// The byte each TFRecord frame of `bytes` starts at.
std::vector<size_t> FrameStarts(const std::string& bytes) {
  std::vector<size_t> at;
  for (size_t p = 0; p + data::kTfRecordHeader <= bytes.size();) {
    at.push_back(p);
    uint64_t length = 0;
    std::memcpy(&length, bytes.data() + p, 8);
    p += data::kTfRecordHeader + length + 4;
  }
  return at;
}

// The files of `dir` whose names start with `prefix`.
int FilesStartingWith(const TempDir& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    n += e.path().filename().string().rfind(prefix, 0) == 0;
  }
  return n;
}

void WritePythonTfRecords(const TempDir& dir, int n) {
  const std::string script = edl::testing::SourceDir() + "/tests/data/write_tfrecords.py";
  ASSERT_EQ(
      std::system(
          ("/usr/bin/python3 " + script + " " + dir.File("py") + " " + std::to_string(n)).c_str()),
      0);
}

// Indexing checks framing, not payloads: a flipped payload byte indexes;
// --verify names its record and writes no index (nor leaves a staged one).
TEST(DataIndex, IndexesAFileWithACorruptPayloadButVerifyNamesItAndWritesNoIndex) {
  TempDir dir;
  WritePythonTfRecords(dir, 200);  // Examples encoded in Python
  std::string bytes = ReadText(dir.File("py.examples.tfrecord"));
  const std::vector<size_t> at = FrameStarts(bytes);
  ASSERT_EQ(at.size(), 200u);
  bytes[at[123] + data::kTfRecordHeader + 5] ^= 0x10;
  const std::string bad = dir.File("bad.tfrecord");
  WriteText(bad, bytes);
  const std::string says =
      bad + ": record 123 at byte " + std::to_string(at[123]) + ": data checksum mismatch";
  RunResult verified = RunEdl({"data", "index", "--verify", bad});
  EXPECT_EQ(verified.exit_code, 1);
  EXPECT_NE(verified.err.find("edl: " + says), std::string::npos) << verified.err;
  EXPECT_EQ(FilesStartingWith(dir, ".bad.tfrecord"), 0);

  RunResult plain = RunEdl({"data", "index", bad});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("bad.tfrecord: 200 records (TFRecord)"), std::string::npos) << plain.out;
  const std::string index = ReadText(dir.File(".bad.tfrecord.edlidx"));
  // A fresh index does not spare the records their check, and stays as it was.
  RunResult again = RunEdl({"data", "index", "--verify", bad});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find(says), std::string::npos) << again.err;
  EXPECT_EQ(ReadText(dir.File(".bad.tfrecord.edlidx")), index);
  EXPECT_EQ(FilesStartingWith(dir, ".bad.tfrecord"), 1);
}

TEST(DataIndex, VerifyFailsARecordWithARightChecksumThatIsNotAnExample) {
  TempDir dir;
  // Python's framing and checksums around payloads that are no Examples.
  WritePythonTfRecords(dir, 20);
  RunResult py = RunEdl({"data", "index", "--verify", dir.File("py.tfrecord")});
  EXPECT_EQ(py.exit_code, 1);
  EXPECT_NE(py.err.find(dir.File("py.tfrecord") +
                        ": record 0 at byte 0: not a serialized tf.train.Example"),
            std::string::npos)
      << py.err;
  EXPECT_EQ(FilesStartingWith(dir, ".py.tfrecord"), 0);
  std::string file;
  for (int i = 0; i < 5; ++i) file += data::TfRecordFrame(data::SerializeExample({}));
  const size_t at = file.size();
  file += data::TfRecordFrame("\x0a\x05\x0a\x03");  // a `features` cut short
  file += data::TfRecordFrame(data::SerializeExample({}));
  WriteText(dir.File("odd.tfrecord"), file);
  RunResult odd = RunEdl({"data", "index", "--verify", dir.File("odd.tfrecord")});
  EXPECT_EQ(odd.exit_code, 1);
  EXPECT_NE(odd.err.find(dir.File("odd.tfrecord") + ": record 5 at byte " + std::to_string(at) +
                         ": not a serialized tf.train.Example"),
            std::string::npos)
      << odd.err;
  EXPECT_EQ(FilesStartingWith(dir, ".odd.tfrecord"), 0);
}

TEST(DataIndex, VerifyPassesCleanFilesAndWritesTheSameIndexAsWithout) {
  TempDir dir;
  WritePythonTfRecords(dir, 3000);
  std::string csv = "a,b,label\n";
  for (int i = 0; i < 500; ++i)
    csv += std::to_string(i) + ",\"x,\ny\"," + std::to_string(i % 2) + "\n";
  WriteText(dir.File("t.csv"), csv);
  const std::vector<std::string> files = {dir.File("py.examples.tfrecord"), dir.File("t.csv")};
  const std::vector<std::string> indexes = {dir.File(".py.examples.tfrecord.edlidx"),
                                            dir.File(".t.csv.edlidx")};
  RunResult plain = RunEdl({"data", "index", files[0], files[1]});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::vector<std::string> without;
  for (const std::string& i : indexes) {
    without.push_back(ReadText(i));
    std::filesystem::remove(i);
  }
  RunResult verified = RunEdl({"data", "index", "--verify", "--jobs=3", files[0], files[1]});
  ASSERT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_NE(verified.out.find("py.examples.tfrecord: 3000 records (TFRecord), "), std::string::npos)
      << verified.out;
  EXPECT_NE(verified.out.find("indexed in"), std::string::npos) << verified.out;
  EXPECT_NE(verified.out.find(", every record verified\n"), std::string::npos) << verified.out;
  for (size_t i = 0; i < indexes.size(); ++i) EXPECT_EQ(ReadText(indexes[i]), without[i]) << i;
  EXPECT_EQ(FilesStartingWith(dir, ".py.examples.tfrecord"), 1);
}

// A file of several verification ranges (4 MiB or more each): one thread or
// four name the same first bad record.
TEST(DataIndex, VerifyNamesTheSameFirstBadRecordWithOneThreadOrMany) {
  TempDir dir;
  std::string file;
  std::vector<size_t> at;
  for (int i = 0; i < 200000; ++i) {
    std::map<std::string, data::ExampleFeature> e;
    e["label"].kind = data::ExampleFeature::Kind::kInt64;
    e["label"].ints = {i % 2};
    e["id"].kind = data::ExampleFeature::Kind::kBytes;
    e["id"].bytes = {"record-" + std::to_string(i) + std::string(30, 'x')};
    at.push_back(file.size());
    file += data::TfRecordFrame(data::SerializeExample(e));
  }
  ASSERT_GT(file.size(), 12u << 20);
  for (int i : {190000, 120000}) file[at[i] + data::kTfRecordHeader + 4] ^= 0x01;
  const std::string path = dir.File("many.tfrecord");
  WriteText(path, file);
  const std::string says =
      path + ": record 120000 at byte " + std::to_string(at[120000]) + ": data checksum mismatch";
  for (const std::string jobs : {"--jobs=1", "--jobs=4"}) {
    RunResult r = RunEdl({"data", "index", "--verify", jobs, path});
    EXPECT_EQ(r.exit_code, 1) << jobs;
    EXPECT_NE(r.err.find("edl: " + says + "\n"), std::string::npos) << jobs << "\n" << r.err;
    EXPECT_EQ(FilesStartingWith(dir, ".many.tfrecord"), 0) << jobs;
  }
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
  const std::string script = edl::testing::SourceDir() + "/tests/data/write_tfrecords.py";
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
