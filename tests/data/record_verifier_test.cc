// VerifyRecords and RecordScanner: every record of indexed files checked
// beyond their framing (payload checksums, tf.train.Examples, CSV fields),
// in parallel, naming the first bad record the same whatever the threads;
// and StagedRecordIndex, put in place only once verified.
#include "data/record_verifier.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/file.h"
#include "data/record_index.h"
#include "data/record_reader.h"
#include "data/record_scanner.h"
#include "data/staged_record_index.h"
#include "data/tf_example.h"
#include "data/tfrecord.h"
#include "tests/data/test_files.h"
#include "tests/testing/paths.h"

namespace edl::data {
namespace {

using testing_files::ReadRaw;
using testing_files::TempDir;

std::string Example(int i) {
  std::map<std::string, ExampleFeature> e;
  e["label"].kind = ExampleFeature::Kind::kInt64;
  e["label"].ints = {i % 2};
  e["x"].kind = ExampleFeature::Kind::kFloat;
  e["x"].floats = {0.5f * static_cast<float>(i), 1.0f};
  e["id"].kind = ExampleFeature::Kind::kBytes;
  e["id"].bytes = {"r" + std::to_string(i) + std::string(i % 13, 'z')};
  return SerializeExample(e);
}

// n framed Examples, the byte each frame starts at and each payload.
struct Records {
  std::string bytes;
  std::vector<uint64_t> at;
  std::vector<std::string> payloads;
};
Records Examples(int n) {
  Records r;
  for (int i = 0; i < n; ++i) {
    r.at.push_back(r.bytes.size());
    r.payloads.push_back(Example(i));
    r.bytes += TfRecordFrame(r.payloads.back());
  }
  return r;
}

// A payload byte of record `i` flipped: its framing stays valid.
void FlipPayload(Records& r, int i) { r.bytes[r.at[i] + kTfRecordHeader + 3] ^= 0x40; }

IndexOptions Small() {
  IndexOptions o;
  o.every = 7;
  o.access_spacing = 4096;
  return o;
}

RecordIndex Index(const std::string& path, RecordFormat format, IndexOptions options = Small()) {
  auto index = BuildRecordIndex(path, format, options);
  EDL_CHECK(index.ok()) << index.status().message();
  return std::move(*index);
}

Status Verify(const RecordIndex& index, int threads, uint64_t range_bytes = 1) {
  std::vector<Status> got =
      VerifyRecords({&index}, {.threads = threads, .range_bytes = range_bytes});
  EDL_CHECK_EQ(got.size(), 1u);
  return got[0];
}

void ExpectBad(const Status& s, const std::string& says) {
  ASSERT_FALSE(s.ok()) << says;
  EXPECT_NE(s.message().find(says), std::string::npos) << s.message();
}

TEST(VerifyRecords, NamesARecordWhosePayloadChecksumIsWrongThoughItIndexes) {
  TempDir dir;
  Records r = Examples(100);
  FlipPayload(r, 37);
  const std::string path = dir.Write("bad.tfrecord", r.bytes);
  // Indexing checks the framing only.
  const RecordIndex index = Index(path, RecordFormat::kTfRecord);
  EXPECT_EQ(index.num_records, 100u);
  ExpectBad(Verify(index, 1),
            path + ": record 37 at byte " + std::to_string(r.at[37]) + ": data checksum mismatch");
}

TEST(VerifyRecords, NamesAPayloadWithARightChecksumThatIsNotATfExample) {
  TempDir dir;
  Records r = Examples(20);
  const uint64_t at = r.bytes.size();
  r.bytes += TfRecordFrame("\xff\xff\xff");
  r.bytes += TfRecordFrame(Example(21));
  const std::string path = dir.Write("odd.tfrecord", r.bytes);
  ExpectBad(
      Verify(Index(path, RecordFormat::kTfRecord), 1),
      path + ": record 20 at byte " + std::to_string(at) + ": not a serialized tf.train.Example");
}

TEST(VerifyRecords, PassesACleanFileAndCountsEveryByte) {
  TempDir dir;
  for (bool gzip : {false, true}) {
    const std::string path = dir.Write("ok.tfrecord", Examples(3000).bytes, gzip);
    const RecordIndex index = Index(path, RecordFormat::kTfRecord);
    std::atomic<uint64_t> checked{0};
    std::vector<Status> got =
        VerifyRecords({&index}, {.threads = 4, .range_bytes = 2000, .checked_bytes = &checked});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].ok()) << got[0].message();
    EXPECT_EQ(checked.load(), index.data_size) << gzip;
  }
}

// Many ranges, several bad records: the first is named with 1 thread or 8.
TEST(VerifyRecords, NamesTheSameFirstBadRecordWithAnyNumberOfThreads) {
  TempDir dir;
  Records r = Examples(5000);
  for (int i : {4321, 1234, 2500, 4999}) FlipPayload(r, i);
  for (bool gzip : {false, true}) {
    const std::string path = dir.Write(gzip ? "m.tfrecord.gz" : "m.tfrecord", r.bytes, gzip);
    const RecordIndex index = Index(path, RecordFormat::kTfRecord);
    const std::string first =
        path + ": record 1234 at byte " + std::to_string(r.at[1234]) + ": data checksum mismatch";
    for (int threads : {1, 2, 8}) {
      for (uint64_t range_bytes : {uint64_t{1}, uint64_t{10000}, uint64_t{1} << 30}) {
        SCOPED_TRACE("gzip " + std::to_string(gzip) + ", " + std::to_string(threads) +
                     " threads, ranges of " + std::to_string(range_bytes) + " bytes");
        const Status s = Verify(index, threads, range_bytes);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.message(), first);
      }
    }
  }
}

TEST(VerifyRecords, GivesEachFileItsOwnVerdict) {
  TempDir dir;
  Records bad = Examples(300);
  FlipPayload(bad, 299);
  const RecordIndex a =
      Index(dir.Write("a.tfrecord", Examples(300).bytes), RecordFormat::kTfRecord);
  const RecordIndex b = Index(dir.Write("b.tfrecord", bad.bytes), RecordFormat::kTfRecord);
  const RecordIndex c =
      Index(dir.Write("c.csv", "a,b\n1,2\n3,4\n"), RecordFormat::kCsvRows, IndexOptions());
  std::vector<Status> got = VerifyRecords({&a, &b, &c}, {.threads = 3, .range_bytes = 1});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[0].ok()) << got[0].message();
  ExpectBad(got[1], "b.tfrecord: record 299 at byte " + std::to_string(bad.at[299]));
  EXPECT_TRUE(got[2].ok()) << got[2].message();
}

// Examples encoded by hand in Python (tests/data/write_tfrecords.py) pass;
// its plain payloads ("python-record-<i>-...") are no Examples.
TEST(VerifyRecords, ReadsTfRecordsWrittenByAnIndependentImplementation) {
  TempDir dir;
  const std::string script = edl::testing::SourceDir() + "/tests/data/write_tfrecords.py";
  const std::string command = "/usr/bin/python3 " + script + " " + dir.File("py") + " 300";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_TRUE(Verify(Index(dir.File("py.examples.tfrecord"), RecordFormat::kTfRecord), 4).ok());
  ExpectBad(Verify(Index(dir.File("py.tfrecord.gz"), RecordFormat::kTfRecord), 4),
            "py.tfrecord.gz: record 0 at byte 0: not a serialized tf.train.Example");
}

TEST(VerifyRecords, ChecksThatEveryCsvRowHasTheFirstRowsFields) {
  TempDir dir;
  std::string ok = "a,b,label\n";
  for (int i = 0; i < 200; ++i) ok += std::to_string(i) + ",\"x, \"\"y\"\"\nz\",1\n";
  const std::string good = dir.Write("good.csv", ok);
  EXPECT_TRUE(Verify(Index(good, RecordFormat::kCsvRows), 4).ok());
  const std::string short_row = dir.Write("short.csv", ok + "1,2\n" + "5,6,7\n");
  ExpectBad(Verify(Index(short_row, RecordFormat::kCsvRows), 4),
            short_row + ": row 202 at byte " + std::to_string(ok.size()) +
                ": expected 3 fields (as the first row has), got 2");
  const std::string quote = dir.Write("quote.csv", ok + "1,\"b\"c,0\n");
  ExpectBad(Verify(Index(quote, RecordFormat::kCsvRows), 4),
            quote + ": row 202 at byte " + std::to_string(ok.size()) +
                ": unexpected character 'c' after the closing quote of field 2");
}

TEST(RecordScanner, ReturnsEachRecordWithItsNumberAndByte) {
  TempDir dir;
  const Records r = Examples(50);
  const RecordIndex index = Index(dir.Write("s.tfrecord", r.bytes), RecordFormat::kTfRecord);
  auto scanner = RecordScanner::Open(index, 21);
  ASSERT_TRUE(scanner.ok()) << scanner.status().message();
  for (int i = 21; i < 50; ++i) {
    auto got = (*scanner)->Next();
    ASSERT_TRUE(got.ok() && *got) << i;
    EXPECT_EQ((*scanner)->number(), static_cast<uint64_t>(i));
    EXPECT_EQ((*scanner)->offset(), r.at[i]);
    EXPECT_EQ((*scanner)->record(), r.payloads[i]);
  }
  auto end = (*scanner)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(*end);
}

TEST(StagedRecordIndex, IsPutInPlaceOnlyOnCommit) {
  TempDir dir;
  const std::string path = dir.Write("s.tfrecord.gz", Examples(2000).bytes, true);
  const RecordIndex built = Index(path, RecordFormat::kTfRecord);
  ASSERT_GT(built.access.size(), 1u);
  const std::string cache = IndexCachePath(path, "");
  {
    auto staged = StagedRecordIndex::Write(built, "");
    ASSERT_TRUE(staged.ok()) << staged.status().message();
    EXPECT_EQ((*staged)->cache_path(), cache);
    EXPECT_FALSE(std::filesystem::exists(cache));
    EXPECT_TRUE(Verify((*staged)->index(), 4, 1000).ok());
  }
  // Dropped without Commit: nothing is left beside the data.
  EXPECT_EQ(
      std::distance(std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()),
                    std::filesystem::directory_iterator()),
      1);
  auto staged = StagedRecordIndex::Write(built, "");
  ASSERT_TRUE(staged.ok());
  ASSERT_TRUE((*staged)->Commit().ok());
  EXPECT_EQ(ReadRaw(cache), SerializeRecordIndex(built));
  // Its windows are read from the file in place.
  EXPECT_TRUE(Verify((*staged)->index(), 4, 1000).ok());
  EXPECT_EQ((*staged)->index().window_file, cache);
  auto loaded = LoadFreshRecordIndex(path, RecordFormat::kTfRecord, "");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->num_records, 2000u);
}

}  // namespace
}  // namespace edl::data
