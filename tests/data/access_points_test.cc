// Where a gzip index puts its access points: just before records numbered a
// multiple of a power of two about a spacing apart, so that a task of that
// size inflates almost nothing before its first record; offsets as dense as
// the points for large records; and points still about every few spacings
// when deflate blocks outgrow the history the indexer keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "data/record_index.h"
#include "data/record_reader.h"
#include "data/tfrecord.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

// Row i: its number and ten pseudo-random numbers (compresses about 2x, in
// deflate blocks of tens of KiB, like real CSV).
std::string Row(uint64_t i) {
  std::string row = std::to_string(i);
  uint64_t x = i * 0x9E3779B97F4A7C15ull + 1;
  for (int k = 0; k < 10; ++k) {
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    row += "," + std::to_string(x % 100000);
  }
  return row;
}

// Uncompressed bytes a reader starting at record r inflates before it.
uint64_t Lead(const RecordIndex& index, uint64_t r) {
  const uint64_t at = index.offsets[r / index.every];
  auto it = std::upper_bound(index.access.begin(), index.access.end(), at,
                             [](uint64_t v, const GzipAccessPoint& p) { return v < p.out_offset; });
  return at - std::prev(it)->out_offset;
}

std::string FirstRecord(const RecordIndex& index, uint64_t r) {
  auto reader = RecordReader::Open(index, r);
  EDL_CHECK(reader.ok()) << reader.status().message();
  std::string record;
  auto got = (*reader)->Next(&record);
  EDL_CHECK(got.ok() && *got) << "record " << r;
  return record;
}

TEST(AccessPoints, SitJustBeforeRecordsNumberedAMultipleOfAPowerOfTwo) {
  TempDir dir;
  std::string text;
  for (uint64_t i = 0; i < 150000; ++i) text += Row(i) + "\n";
  const std::string path = dir.Write("rows.csv.gz", text, /*gzip=*/true);
  IndexOptions o;
  o.access_spacing = 1 << 20;
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, o);
  ASSERT_TRUE(index.ok()) << index.status().message();
  // About 60 bytes a row: ~17,000 rows in the first MiB, so a point before
  // every 32,768th row, about 2 MiB apart.
  const uint64_t stride = 32768;
  EXPECT_EQ(index->every, 1024u);
  EXPECT_GE(index->access.size(), index->data_size / (4u << 20));
  EXPECT_LE(index->access.size(), index->data_size / (1u << 19) + 1);
  for (uint64_t r = stride; r < index->num_records; r += stride) {
    // Less than a deflate block to inflate before the row, not up to a spacing.
    EXPECT_LT(Lead(*index, r), 256u * 1024) << "row " << r;
    EXPECT_EQ(FirstRecord(*index, r), Row(r));
  }
  // Rows between points are still found (from the point before them).
  EXPECT_EQ(FirstRecord(*index, stride + 1000), Row(stride + 1000));
}

TEST(AccessPoints, LargeRecordsMakeTheOffsetsAsDenseAsThePoints) {
  TempDir dir;
  std::string bytes;
  for (int i = 0; i < 200; ++i) {
    std::string payload = "record " + std::to_string(i) + " ";
    while (payload.size() < 64 * 1024) payload += Row(payload.size() + i * 1000);
    bytes += TfRecordFrame(payload);
  }
  const std::string path = dir.Write("big.tfrecord.gz", bytes, /*gzip=*/true);
  IndexOptions o;
  o.access_spacing = 1 << 20;
  auto index = BuildRecordIndex(path, RecordFormat::kTfRecord, o);
  ASSERT_TRUE(index.ok()) << index.status().message();
  // 16 records of 64 KiB start in the first MiB: offsets and points every 16.
  EXPECT_EQ(index->every, 16u);
  EXPECT_GE(index->access.size(), 200u / 16 - 1);
  for (uint64_t r = 16; r < 200; r += 16) {
    EXPECT_LT(Lead(*index, r), 256u * 1024) << "record " << r;
    const std::string start = "record " + std::to_string(r) + " ";
    EXPECT_EQ(FirstRecord(*index, r).substr(0, start.size()), start);
  }
}

TEST(AccessPoints, StillComeEveryFewSpacingsWhenDeflateBlocksOutgrowTheHistory) {
  TempDir dir;
  // One row over and over: deflate blocks of megabytes each.
  std::string text;
  while (text.size() < (48u << 20)) text += "1,2,3\n";
  const std::string path = dir.Write("same.csv.gz", text, /*gzip=*/true);
  IndexOptions o;
  o.access_spacing = 1 << 20;
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, o);
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_EQ(index->num_records, text.size() / 6);
  // At most 4 spacings plus a block between points.
  for (size_t i = 1; i < index->access.size(); ++i) {
    EXPECT_LT(index->access[i].out_offset - index->access[i - 1].out_offset, 10u << 20);
  }
  EXPECT_LT(index->data_size - index->access.back().out_offset, 10u << 20);
  EXPECT_EQ(FirstRecord(*index, index->num_records - 1), "1,2,3");
}

}  // namespace
}  // namespace edl::data
