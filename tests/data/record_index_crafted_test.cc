// A record index file (data/record_index_file.cc) whose checksum is valid
// but whose numbers the indexed file cannot back: refused when it is parsed,
// before any count or size in it reaches an allocation or a reader.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "base/file.h"
#include "data/crc32c.h"
#include "data/record_index.h"
#include "data/record_reader.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

std::string Le(uint64_t v, int bytes) {
  std::string s(bytes, '\0');
  std::memcpy(s.data(), &v, bytes);
  return s;
}

// The index's fields by their byte offsets (record_index_file.cc's layout).
constexpr size_t kFileSizeAt = 8 + 4 + 3;
constexpr size_t kDataSizeAt = kFileSizeAt + 8 + 8 + 8;
constexpr size_t kFirstOffsetAt = kDataSizeAt + 8 + 8 + 8;  // after every and the count

// `bytes` with the u64 at `at` replaced and the checksum made valid again.
std::string Patched(std::string bytes, size_t at, uint64_t value) {
  std::memcpy(bytes.data() + at, &value, 8);
  const uint32_t crc = Crc32c(bytes.data(), bytes.size() - 4);
  std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  return bytes;
}

uint64_t U64At(const std::string& bytes, size_t at) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

// One CSV row per line, 200 rows.
std::string Rows() {
  std::string s;
  for (int i = 0; i < 200; ++i) s += std::to_string(i) + "," + std::to_string(i * 7) + "\n";
  return s;
}

IndexOptions EveryTenth() {
  IndexOptions o;
  o.every = 10;
  return o;
}

// Counts that a valid checksum vouches for but the bytes cannot hold are
// refused before anything is allocated for them.
TEST(RecordIndex, RefusesCraftedCountsWithAValidChecksum) {
  for (uint64_t records : {uint64_t{1} << 61, ~uint64_t{0}}) {
    std::string bytes = "EDLRIDX1" + Le(1, 4) + std::string(1, '\2') + std::string(1, '\0');
    bytes += Le(0, 8) + Le(0, 8) + Le(records, 8) + Le(0, 8) + Le(1, 8) + Le(records, 8);
    bytes += Le(Crc32c(bytes.data(), bytes.size()), 4);
    auto r = ParseRecordIndex(bytes, "crafted.edlidx");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message().rfind("crafted.edlidx: ", 0), 0u) << r.status().message();
  }
}

TEST(RecordIndex, RefusesADataSizeLargerThanThePlainFileItIndexes) {
  TempDir dir;
  const std::string path = dir.Write("rows.csv", Rows());
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, EveryTenth());
  ASSERT_TRUE(index.ok()) << index.status().message();
  const std::string bytes = SerializeRecordIndex(*index);
  ASSERT_EQ(U64At(bytes, kFileSizeAt), index->file_size);
  ASSERT_EQ(U64At(bytes, kDataSizeAt), index->file_size);  // a plain file: all of it

  ASSERT_TRUE(ParseRecordIndex(bytes, "rows.edlidx").ok());
  for (uint64_t data_size : {index->file_size + 1, uint64_t{1} << 40, ~uint64_t{0}}) {
    auto r = ParseRecordIndex(Patched(bytes, kDataSizeAt, data_size), "rows.edlidx");
    ASSERT_FALSE(r.ok()) << data_size;
    EXPECT_EQ(r.status().message(), "rows.edlidx: record index says " + std::to_string(data_size) +
                                        " bytes of data, more than a file of " +
                                        std::to_string(index->file_size) + " bytes holds");
  }
}

TEST(RecordIndex, RefusesADataSizeNoDeflateRatioReachesForAGzipFile) {
  TempDir dir;
  const std::string path = dir.Write("rows.csv.gz", Rows(), /*gzip=*/true);
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, EveryTenth());
  ASSERT_TRUE(index.ok()) << index.status().message();
  ASSERT_TRUE(index->gzip);
  ASSERT_GT(index->data_size, index->file_size);  // compressed: more data than file
  const std::string bytes = SerializeRecordIndex(*index);
  ASSERT_TRUE(ParseRecordIndex(bytes, "gz.edlidx").ok());
  auto r = ParseRecordIndex(Patched(bytes, kDataSizeAt, index->file_size * 1033), "gz.edlidx");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than a gzip file of"), std::string::npos)
      << r.status().message();
}

TEST(RecordIndex, RefusesRecordOffsetsOutOfOrderOrPastTheData) {
  TempDir dir;
  const std::string path = dir.Write("rows.csv", Rows());
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, EveryTenth());
  ASSERT_TRUE(index.ok()) << index.status().message();
  ASSERT_GE(index->offsets.size(), 3u);
  const std::string bytes = SerializeRecordIndex(*index);
  const size_t second = kFirstOffsetAt + 8;
  ASSERT_EQ(U64At(bytes, second), index->offsets[1]);
  for (uint64_t offset : {index->data_size + 1, index->offsets[2] + 1000}) {
    auto r = ParseRecordIndex(Patched(bytes, second, offset), "rows.edlidx");
    ASSERT_FALSE(r.ok()) << offset;
    EXPECT_NE(r.status().message().find("rows.edlidx: record offset "), std::string::npos)
        << r.status().message();
  }
}

// The cached index beside the data is the one a crafted file would replace:
// loading it warns, indexes the data again and reads every row.
TEST(RecordIndex, ACraftedCachedIndexIsRebuiltNotTrusted) {
  TempDir dir;
  const std::string path = dir.Write("rows.csv", Rows());
  bool built = false;
  auto first = LoadOrBuildRecordIndex(path, RecordFormat::kCsvRows, "", EveryTenth(), &built);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(built);
  const std::string cache = IndexCachePath(path, "");
  auto bytes = ReadFile(cache);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(WriteFileAtomically(cache, Patched(*bytes, kDataSizeAt, uint64_t{1} << 40)).ok());

  auto again = LoadOrBuildRecordIndex(path, RecordFormat::kCsvRows, "", EveryTenth(), &built);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(built);
  EXPECT_EQ(again->data_size, first->data_size);
  EXPECT_EQ(again->num_records, 200u);
}

}  // namespace
}  // namespace edl::data
