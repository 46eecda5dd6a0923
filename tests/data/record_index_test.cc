// RecordIndex: counting and finding the records of CSV and TFRecord files,
// plain and gzip, with bounded memory; and every malformed input named.
#include "data/record_index.h"

#include <gtest/gtest.h>
#include <utime.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "base/file.h"
#include "data/crc32c.h"
#include "data/csv_reader.h"
#include "data/record_reader.h"
#include "tests/data/test_files.h"
#include "tests/testing/paths.h"

namespace edl::data {
namespace {

using testing_files::ReadRaw;
using testing_files::TempDir;

std::string Le(uint64_t v, int bytes) {
  std::string s(bytes, '\0');
  std::memcpy(s.data(), &v, bytes);
  return s;
}

// TFRecord framing, written here from its definition.
std::string Frame(const std::string& payload) {
  const std::string length = Le(payload.size(), 8);
  return length + Le(MaskCrc(Crc32c(length.data(), 8)), 4) + payload +
         Le(MaskCrc(Crc32c(payload.data(), payload.size())), 4);
}

std::vector<std::string> Payloads(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string p(rng() % 300, '\0');
    for (char& c : p) c = static_cast<char>(rng() & 0xff);
    out.push_back("record-" + std::to_string(i) + ":" + p);
  }
  return out;
}

std::string Frames(const std::vector<std::string>& payloads) {
  std::string s;
  for (const auto& p : payloads) s += Frame(p);
  return s;
}

// Reads every record from `first` to the end.
std::vector<std::string> ReadFrom(const RecordIndex& index, uint64_t first) {
  auto reader = RecordReader::Open(index, first);
  EDL_CHECK(reader.ok()) << reader.status().message();
  std::vector<std::string> out;
  std::string r;
  while (true) {
    auto got = (*reader)->Next(&r);
    EDL_CHECK(got.ok()) << got.status().message();
    if (!*got) break;
    out.push_back(r);
  }
  return out;
}

IndexOptions Small() {
  IndexOptions o;
  o.every = 7;
  o.access_spacing = 4096;  // many access points in a small gzip file
  return o;
}

TEST(Crc32c, MatchesTheCastagnoliCheckValue) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // Continuing a CRC equals computing it at once.
  EXPECT_EQ(Crc32c("6789", 4, Crc32c("12345", 5)), 0xE3069283u);
}

class TfRecordIndex : public ::testing::TestWithParam<bool> {};

TEST_P(TfRecordIndex, CountsEveryRecordAndReadsFromAnyOne) {
  const bool gzip = GetParam();
  TempDir dir;
  const auto payloads = Payloads(500, 1);
  const std::string path = dir.Write("a.tfrecord", Frames(payloads), gzip);
  auto index = BuildRecordIndex(path, RecordFormat::kTfRecord, Small());
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_EQ(index->num_records, 500u);
  EXPECT_EQ(index->gzip, gzip);
  EXPECT_EQ(index->offsets.size(), (500u + 6) / 7);
  if (gzip) {
    EXPECT_GT(index->access.size(), 1u);
  }
  for (uint64_t first : {0, 1, 6, 7, 8, 250, 499, 500}) {
    const auto got = ReadFrom(*index, first);
    ASSERT_EQ(got.size(), 500 - first) << first;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], payloads[first + i]) << first;
  }
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, TfRecordIndex, ::testing::Bool());

TEST(TfRecordIndex, ReadsAcrossConcatenatedGzipMembers) {
  TempDir dir;
  const auto a = Payloads(200, 2), b = Payloads(200, 3);
  dir.Write("a.gz", Frames(a), true);
  dir.Write("b.gz", Frames(b), true);
  const std::string both = *ReadFile(dir.File("a.gz")) + *ReadFile(dir.File("b.gz"));
  const std::string path = dir.Write("ab.tfrecord.gz", both);
  auto index = BuildRecordIndex(path, RecordFormat::kTfRecord, Small());
  ASSERT_TRUE(index.ok()) << index.status().message();
  ASSERT_EQ(index->num_records, 400u);
  for (uint64_t first : {0, 150, 199, 200, 201, 333}) {
    const auto got = ReadFrom(*index, first);
    ASSERT_EQ(got.size(), 400 - first);
    const std::string& expect = first < 200 ? a[first] : b[first - 200];
    EXPECT_EQ(got[0], expect) << first;
    EXPECT_EQ(got.back(), b.back());
  }
}

// TFRecords written by another implementation (tests/data/write_tfrecords.py:
// framing and CRC-32C in Python from the format's definition) read back.
TEST(TfRecordIndex, ReadsTfRecordsWrittenByAnIndependentImplementation) {
  TempDir dir;
  const std::string script = edl::testing::SourceDir() + "/tests/data/write_tfrecords.py";
  const std::string command = "/usr/bin/python3 " + script + " " + dir.File("py") + " 300";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  for (const std::string name : {"py.tfrecord", "py.tfrecord.gz"}) {
    auto index = BuildRecordIndex(dir.File(name), RecordFormat::kTfRecord, Small());
    ASSERT_TRUE(index.ok()) << index.status().message();
    ASSERT_EQ(index->num_records, 300u) << name;
    const auto got = ReadFrom(*index, 123);
    ASSERT_EQ(got.size(), 177u);
    for (size_t i = 0; i < got.size(); ++i) {
      const int r = static_cast<int>(123 + i);
      ASSERT_EQ(got[i], "python-record-" + std::to_string(r) + "-" + std::string(r % 50, 'x'))
          << name;
    }
  }
}

class CsvIndex : public ::testing::TestWithParam<bool> {};

TEST_P(CsvIndex, CountsRowsQuoteAwareSkippingEmptyOnesAndReadsFromAnyOne) {
  TempDir dir;
  std::vector<std::string> rows;
  std::string text;
  for (int i = 0; i < 300; ++i) {
    std::string row = std::to_string(i) + ",x";
    if (i % 5 == 0) row += ",\"a quoted\nnewline, and \"\"quotes\"\"\"";
    rows.push_back(row);
    text += row + (i % 3 == 0 ? "\r\n" : "\n");
    if (i % 17 == 0) text += "\n\r\n";  // empty rows: not records
  }
  text += "last,row,no newline";
  rows.push_back("last,row,no newline");
  const std::string path = dir.Write("a.csv", text, GetParam());
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, Small());
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_EQ(index->num_records, rows.size());
  EXPECT_EQ(index->data_size, text.size());
  for (uint64_t first : {0, 1, 5, 7, 150, 299, 300, 301}) {
    const auto got = ReadFrom(*index, first);
    ASSERT_EQ(got.size(), rows.size() - first) << first;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], rows[first + i]) << first;
  }
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, CsvIndex, ::testing::Bool());

// The index counts what data/csv_reader.h reads: quotes open a field only at
// its start (elsewhere they are literal), "" inside quotes, quoted newlines,
// over buffer boundaries (several MiB of such rows).
TEST(CsvIndex, CountsTheRowsTheCsvReaderReads) {
  TempDir dir;
  std::mt19937 rng(9);
  std::string text = "id,text,label\n";
  for (int i = 0; i < 60000; ++i) {
    switch (rng() % 5) {
      case 0: text += std::to_string(i) + ",\"a \"\"quoted\"\" and\nnewline\",1\n"; break;
      case 1: text += std::to_string(i) + ",12\" pipe,0\n"; break;  // a literal quote
      case 2: text += std::to_string(i) + ",\"\",1\r\n"; break;     // an empty quoted field
      case 3: text += "\n"; break;                                  // a blank line
      default: text += std::to_string(i) + "," + std::string(rng() % 80, 'x') + ",0\n";
    }
  }
  text += "last,\"quote at the very end\"";
  int64_t expected = 0;
  CsvReader reader(text, ',', "t.csv");
  while (true) {
    auto got = reader.Next();
    ASSERT_TRUE(got.ok()) << got.status().message();
    if (!*got) break;
    ++expected;
  }
  for (bool gzip : {false, true}) {
    const std::string path = dir.Write(gzip ? "t.csv.gz" : "t.csv", text, gzip);
    auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, Small());
    ASSERT_TRUE(index.ok()) << index.status().message();
    EXPECT_EQ(static_cast<int64_t>(index->num_records), expected) << gzip;
    const auto rows = ReadFrom(*index, 0);
    EXPECT_EQ(static_cast<int64_t>(rows.size()), expected);
    EXPECT_EQ(rows.back(), "last,\"quote at the very end\"");
    EXPECT_EQ(ReadFrom(*index, 30000).size(), static_cast<size_t>(expected - 30000));
  }
  // An odd literal quote is not an unterminated field.
  auto literal =
      BuildRecordIndex(dir.Write("odd.csv", "a,b\n1,12\" pipe\n"), RecordFormat::kCsvRows);
  ASSERT_TRUE(literal.ok()) << literal.status().message();
  EXPECT_EQ(literal->num_records, 2u);
}

// A reader starting deep in a gzip file resumes at an access point (a bit
// position inside the deflate stream plus its 32 KiB window) near it.
TEST(CsvIndex, StartsDeepInALargeGzipFileFromAnAccessPoint) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 50000; ++i) {
    text += std::to_string(i) + ",value " + std::to_string(i * 7919 % 10007) + "\n";
  }
  const std::string path = dir.Write("big.csv.gz", text, true);
  IndexOptions o;
  o.every = 100;
  o.access_spacing = 16 * 1024;
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, o);
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_EQ(index->num_records, 50000u);
  EXPECT_GT(index->access.size(), 5u);
  int mid_byte_points = 0;
  for (const auto& p : index->access) mid_byte_points += p.bits != 0;
  EXPECT_GT(mid_byte_points, 0);  // resumes at a bit inside a byte are exercised
  for (uint64_t first : {0, 12345, 33333, 49999}) {
    auto reader = RecordReader::Open(*index, first);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    std::string row;
    ASSERT_TRUE(*(*reader)->Next(&row));
    EXPECT_EQ(row, std::to_string(first) + ",value " + std::to_string(first * 7919 % 10007));
  }
}

TEST(RecordIndex, SurvivesSerializationAndIsRefusedWhenCorrupt) {
  TempDir dir;
  const std::string path = dir.Write("a.tfrecord", Frames(Payloads(100, 4)), true);
  auto index = BuildRecordIndex(path, RecordFormat::kTfRecord, Small());
  ASSERT_TRUE(index.ok());
  const std::string bytes = SerializeRecordIndex(*index);
  auto back = ParseRecordIndex(bytes, "idx");
  ASSERT_TRUE(back.ok()) << back.status().message();
  back->path = path;
  EXPECT_EQ(back->num_records, 100u);
  EXPECT_EQ(back->offsets, index->offsets);
  ASSERT_EQ(back->access.size(), index->access.size());
  EXPECT_EQ(back->access.back().window, index->access.back().window);
  EXPECT_EQ(ReadFrom(*back, 42), ReadFrom(*index, 42));
  for (size_t at : {size_t{0}, size_t{9}, bytes.size() / 2, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[at] ^= 0x40;
    auto r = ParseRecordIndex(bad, "idx");
    ASSERT_FALSE(r.ok()) << at;
    EXPECT_EQ(r.status().message().rfind("idx: ", 0), 0u) << r.status().message();
  }
  EXPECT_FALSE(ParseRecordIndex(bytes.substr(0, 20), "idx").ok());
}

TEST(RecordIndex, ALoadedIndexLeavesItsWindowsInTheFileUntilAReaderStartsThere) {
  TempDir dir;
  const auto payloads = Payloads(400, 6);
  const std::string path = dir.Write("a.tfrecord.gz", Frames(payloads), true);
  bool built = false;
  auto index = LoadOrBuildRecordIndex(path, RecordFormat::kTfRecord, "", Small(), &built);
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_TRUE(built);
  ASSERT_GT(index->access.size(), 3u);
  // Built and saved, it is held as if loaded: no window in memory.
  EXPECT_EQ(index->window_file, dir.File(".a.tfrecord.gz.edlidx"));
  for (const GzipAccessPoint& p : index->access) {
    EXPECT_TRUE(p.window.empty());
    if (p.out_offset > 0) {
      EXPECT_GT(p.packed_size, 0u);
    }
  }
  for (uint64_t first : {0, 150, 399}) {
    const auto got = ReadFrom(*index, first);
    ASSERT_EQ(got.size(), 400 - first);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], payloads[first + i]) << first;
  }
  // The index file rewritten under a loaded index: a reader that needs a
  // window says so, naming the index file.
  const std::string idx = index->window_file;
  std::string bytes = ReadRaw(idx);
  for (const GzipAccessPoint& p : index->access) {
    if (p.packed_size > 0) bytes[p.packed_at] ^= 0x20;  // every window, same size
  }
  std::ofstream(idx, std::ios::binary) << bytes;
  auto reader = RecordReader::Open(*index, 399);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message().rfind(idx + ": changed since it was loaded", 0), 0u)
      << reader.status().message();
  std::filesystem::remove(idx);
  reader = RecordReader::Open(*index, 399);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message().rfind(idx + ": cannot open the record index", 0), 0u)
      << reader.status().message();
}

TEST(RecordIndex, IsCachedBesideTheDataAndRebuiltWhenTheFileChanges) {
  TempDir dir;
  const std::string path = dir.Write("a.tfrecord", Frames(Payloads(50, 5)));
  bool built = false;
  auto first = LoadOrBuildRecordIndex(path, RecordFormat::kTfRecord, "", Small(), &built);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(built);
  EXPECT_TRUE(std::filesystem::exists(dir.File(".a.tfrecord.edlidx")));
  auto again = LoadOrBuildRecordIndex(path, RecordFormat::kTfRecord, "", Small(), &built);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(built);
  EXPECT_EQ(again->num_records, 50u);
  // Appended to: stale (size), rebuilt.
  dir.Write("a.tfrecord", Frames(Payloads(60, 5)));
  EXPECT_FALSE(CheckIndexFresh(*again).ok());
  auto rebuilt = LoadOrBuildRecordIndex(path, RecordFormat::kTfRecord, "", Small(), &built);
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_TRUE(built);
  EXPECT_EQ(rebuilt->num_records, 60u);
}

TEST(RecordIndex, GoesToTheIndexDirectoryWhenTheDataDirectoryIsReadOnly) {
  TempDir dir;
  EXPECT_EQ(IndexCachePath(dir.File("a.csv"), dir.File("idx")), dir.File(".a.csv.edlidx"));
  const std::string elsewhere = IndexCachePath("/data/version", dir.File("idx"), false);
  EXPECT_EQ(elsewhere.rfind(dir.File("idx") + "/", 0), 0u) << elsewhere;
  EXPECT_NE(elsewhere.find("-version.edlidx"), std::string::npos) << elsewhere;
}

// ---- Malformed input: one clear error naming the file and where ----------

void ExpectIndexError(const std::string& path, RecordFormat format, const std::string& says) {
  auto index = BuildRecordIndex(path, format, Small());
  ASSERT_FALSE(index.ok()) << says;
  EXPECT_NE(index.status().message().find(path), std::string::npos) << index.status().message();
  EXPECT_NE(index.status().message().find(says), std::string::npos) << index.status().message();
}

TEST(RecordIndex, NamesTheByteOfABadLengthChecksum) {
  TempDir dir;
  std::string bytes = Frames(Payloads(10, 6));
  const size_t third = Frame(Payloads(10, 6)[0]).size() + Frame(Payloads(10, 6)[1]).size();
  bytes[third + 3] ^= 1;  // record 2's length
  ExpectIndexError(dir.Write("bad.tfrecord", bytes), RecordFormat::kTfRecord,
                   "record 2 at byte " + std::to_string(third) + ": bad length checksum");
  ExpectIndexError(dir.Write("notrec.tfrecord", "id,label\n1,2\n3,4\n"), RecordFormat::kTfRecord,
                   "record 0 at byte 0: bad length checksum");
}

TEST(RecordIndex, NamesATruncatedRecordAndATruncatedGzipMember) {
  TempDir dir;
  const std::string bytes = Frames(Payloads(10, 7));
  ExpectIndexError(dir.Write("cut.tfrecord", bytes.substr(0, bytes.size() - 5)),
                   RecordFormat::kTfRecord, "truncated: record 9 at byte");
  ExpectIndexError(dir.Write("hdr.tfrecord", bytes + "abc"), RecordFormat::kTfRecord,
                   "less than a record header");
  dir.Write("whole.gz", bytes, true);
  const std::string gz = *ReadFile(dir.File("whole.gz"));
  ExpectIndexError(dir.Write("cut.tfrecord.gz", gz.substr(0, gz.size() / 2)),
                   RecordFormat::kTfRecord, "truncated gzip data");
  ExpectIndexError(dir.Write("open.csv", "a,b\n1,\"never closed\n2,3\n"), RecordFormat::kCsvRows,
                   "the row starting at byte 4 opens a quoted field that is never closed");
}

// What indexing checks of gzip data beyond the framing: each member's
// CRC-32 (zlib checks it while inflating from the start).
TEST(RecordIndex, ChecksTheCrcOfEveryGzipMember) {
  TempDir dir;
  dir.Write("whole.gz", Frames(Payloads(10, 8)), true);
  std::string gz = *ReadFile(dir.File("whole.gz"));
  gz[gz.size() - 8] ^= 1;  // the trailer: CRC-32, then the length
  ExpectIndexError(dir.Write("crc.tfrecord.gz", gz), RecordFormat::kTfRecord,
                   "corrupt gzip data near compressed byte");
}

TEST(RecordReader, NamesADataChecksumMismatch) {
  TempDir dir;
  std::string bytes = Frames({"hello", "world"});
  const size_t second = Frame("hello").size();
  const std::string path = dir.Write("flip.tfrecord", bytes);
  auto index = BuildRecordIndex(path, RecordFormat::kTfRecord);
  ASSERT_TRUE(index.ok());
  bytes[second + 12 + 1] ^= 1;  // "world" -> "wprld": lengths still fine
  dir.Write("flip.tfrecord", bytes);
  auto reader = RecordReader::Open(*index, 1);
  ASSERT_TRUE(reader.ok());
  std::string r;
  auto got = (*reader)->Next(&r);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find(path + ": record 1 at byte " + std::to_string(second) +
                                        ": data checksum mismatch"),
            std::string::npos)
      << got.status().message();
}

// A length with a valid checksum but past the data (a crafted or changed
// file) is refused before it sizes a buffer or wraps around.
TEST(RecordReader, RefusesALengthPastTheData) {
  TempDir dir;
  const std::string path = dir.Write("a.tfrecord", Frames({"hello", "world"}));
  auto index = BuildRecordIndex(path, RecordFormat::kTfRecord);
  ASSERT_TRUE(index.ok());
  for (uint64_t length : {uint64_t{1} << 39, ~uint64_t{0} - 8}) {
    std::string bytes = Frames({"hello"});
    const std::string huge = Le(length, 8);
    bytes += huge + Le(MaskCrc(Crc32c(huge.data(), 8)), 4) + "world" + Le(0, 4);
    dir.Write("a.tfrecord", bytes);
    auto reader = RecordReader::Open(*index, 1);
    ASSERT_TRUE(reader.ok());
    std::string r;
    auto got = (*reader)->Next(&r);
    ASSERT_FALSE(got.ok());
    EXPECT_NE(
        got.status().message().find("record 1 at byte " + std::to_string(Frame("hello").size()) +
                                    " declares " + std::to_string(length) + " bytes, more than"),
        std::string::npos)
        << got.status().message();
    ExpectIndexError(path, RecordFormat::kTfRecord,
                     "record 1 at byte " + std::to_string(Frame("hello").size()) + " declares " +
                         std::to_string(length) + " bytes");
  }
}

TEST(RecordReader, NamesAFileTruncatedAfterItWasIndexed) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 100; ++i) text += std::to_string(i) + ",row\n";
  const std::string path = dir.Write("t.csv", text);
  auto index = BuildRecordIndex(path, RecordFormat::kCsvRows, Small());
  ASSERT_TRUE(index.ok());
  dir.Write("t.csv", text.substr(0, text.size() / 2));
  EXPECT_FALSE(CheckIndexFresh(*index).ok());
  auto reader = RecordReader::Open(*index, 10);
  ASSERT_TRUE(reader.ok());
  std::string r;
  Result<bool> got = true;
  while (got.ok() && *got) got = (*reader)->Next(&r);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("the index counted 100 records"), std::string::npos)
      << got.status().message();
  std::filesystem::remove(path);
  auto gone = RecordReader::Open(*index, 0);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace edl::data
