// A gzip file that ends in zero bytes after its last member (tar pads its
// blocks so; some writers do too) reads as `gzip -d` reads it: the padding
// is ignored. The files are written by Debian's gzip, and `gzip -dc` is the
// oracle for what they hold.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "base/file.h"
#include "data/byte_stream.h"
#include "data/record_index.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::ReadRaw;
using testing_files::TempDir;

std::string Rows(int n) {
  std::string s = "x,y\n";
  for (int i = 0; i < n; ++i) s += std::to_string(i) + "," + std::to_string(i % 10) + "\n";
  return s;
}

// Runs `command` through the shell; its exit status.
int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Every uncompressed byte edl's stream gives for `path`.
Result<std::string> ReadAll(const std::string& path) {
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, ByteStream::Open(path));
  std::string out;
  char buf[4096];
  for (;;) {
    EDL_ASSIGN_OR_RETURN(size_t n, stream->Read(buf, sizeof buf));
    if (n == 0) return out;
    out.append(buf, n);
  }
}

class GzipPadding : public ::testing::Test {
 protected:
  void SetUp() override {
    rows_ = dir_.Write("rows.csv", Rows(3000));
    gz_ = dir_.File("rows.csv.gz");
    ASSERT_EQ(Shell("gzip -c " + rows_ + " > " + gz_), 0);
  }
  // The gzip file followed by `tail`, as `name`.
  std::string WithTail(const std::string& name, const std::string& tail) {
    return dir_.Write(name, ReadRaw(gz_) + tail);
  }

  TempDir dir_;
  std::string rows_, gz_;
};

TEST_F(GzipPadding, ZerosAfterTheLastMemberReadAsGzipDReadsThem) {
  const std::string block_padded = WithTail("block.csv.gz", std::string(10240, '\0'));
  const std::string one_zero = WithTail("one.csv.gz", std::string(1, '\0'));
  for (const std::string& path : {block_padded, one_zero}) {
    ASSERT_EQ(Shell("gzip -dc " + path + " > " + path + ".out"), 0) << path;
    const std::string gunzipped = ReadRaw(path + ".out");
    ASSERT_EQ(gunzipped, ReadRaw(rows_));
    auto read = ReadAll(path);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(*read, gunzipped) << path;
  }
}

TEST_F(GzipPadding, APaddedFileIsIndexedAndReadFromAnyRow) {
  const std::string padded = WithTail("padded.csv.gz", std::string(20000, '\0'));
  IndexOptions options;
  options.every = 100;
  options.access_spacing = 4096;
  auto index = BuildRecordIndex(padded, RecordFormat::kCsvRows, options);
  ASSERT_TRUE(index.ok()) << index.status().message();
  auto plain = BuildRecordIndex(rows_, RecordFormat::kCsvRows, options);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(index->num_records, plain->num_records);
  EXPECT_EQ(index->data_size, plain->data_size);
  EXPECT_EQ(index->offsets, plain->offsets);
}

TEST_F(GzipPadding, ANonZeroByteInThePaddingIsCorruptAndNamed) {
  const std::string bad = WithTail("bad.csv.gz", std::string(100, '\0') + "x");
  // gzip -d decompresses it but warns (exit status 2); edl refuses it.
  EXPECT_EQ(Shell("gzip -dc " + bad + " > /dev/null 2>&1"), 2);
  auto read = ReadAll(bad);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(bad + ": corrupt gzip data near compressed byte"),
            std::string::npos)
      << read.status().message();
  EXPECT_NE(read.status().message().find("a byte other than zero in the padding"),
            std::string::npos)
      << read.status().message();
}

TEST_F(GzipPadding, GarbageThatIsNotPaddingStillNamesWhatItIsNot) {
  const std::string bad = WithTail("garbage.csv.gz", "garbage");
  auto read = ReadAll(bad);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("neither another member nor zero padding"),
            std::string::npos)
      << read.status().message();
}

}  // namespace
}  // namespace edl::data
