// `edl data index`: record indexes built ahead of a job, reused while fresh,
// and every bad input named.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

TEST(DataIndex, IndexesCsvAndTfRecordFilesAndReusesFreshIndexes) {
  TempDir dir;
  const std::string script = std::string(EDL_SOURCE_DIR) + "/tests/data/write_tfrecords.py";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + dir.File("py") + " 1000").c_str()),
            0);
  std::string csv = "a,b,label\n";
  for (int i = 0; i < 500; ++i) csv += std::to_string(i) + ",\"x\ny\"," + std::to_string(i % 2) + "\n";
  WriteText(dir.File("t.csv"), csv);
  RunResult r = RunEdl({"data", "index", dir.File("py.tfrecord"), dir.File("py.tfrecord.gz"),
                        dir.File("t.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("py.tfrecord: 1000 records (TFRecord), "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("py.tfrecord.gz: 1000 records (TFRecord, gzip)"), std::string::npos) << r.out;
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

}  // namespace
}  // namespace edl::testing
