// BatchPrefetcher: a reader thread gives exactly the Batcher's batches,
// reads at most `depth` batches ahead of the caller, streams a file's task
// through one cursor, and hands the reader's error to the caller.
#include "data/batch_prefetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "data/column_buffer.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::ExpectSameExamples;
using testing_files::TempDir;

// Record r: one numeric input r and the label r % 3. Counts the records
// handed out; reading record `bad` fails, or leaves it out as corrupt
// (`skip_bad`).
class CountingSource : public Source {
 public:
  explicit CountingSource(int64_t n, int64_t bad = -1, bool skip_bad = false)
      : n_(n), bad_(bad), skip_bad_(skip_bad) {
    layout_.num_numeric = 1;
    layout_.has_labels = true;
    layout_.inputs = {{"x", tensor::DType::kFloat32, {1}, 0}};
  }
  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return n_; }
  bool has_labels() const override { return true; }
  const std::vector<InputInfo>& inputs() const override { return layout_.inputs; }
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override {
    EDL_RETURN_IF_ERROR(CheckIndices(indices));
    ColumnBuffer b;
    for (int64_t i : indices) {
      if (i == bad_ && skip_bad_) continue;
      if (i == bad_) return InvalidArgument("counting: record " + std::to_string(i) + ": bad");
      b.numeric.push_back(static_cast<float>(i));
      b.int_labels.push_back(i % 3);
      ++b.size;
    }
    read_ += static_cast<int64_t>(indices.size());
    std::vector<int64_t> all(b.size);
    for (int64_t i = 0; i < b.size; ++i) all[i] = i;
    return b.Gather(layout_, all.data(), b.size);
  }
  int64_t read() const { return read_; }

 private:
  std::string name_ = "counting";
  int64_t n_;
  int64_t bad_;
  bool skip_bad_;
  ColumnLayout layout_;
  mutable std::atomic<int64_t> read_{0};
};

std::vector<Examples> All(BatchPrefetcher& p) {
  std::vector<Examples> out;
  for (;;) {
    auto next = p.Next();
    EXPECT_TRUE(next.ok()) << next.status().message();
    if (!next.ok() || !next->has_value()) return out;
    out.push_back(std::move(**next));
  }
}

TEST(BatchPrefetcher, GivesExactlyTheBatchersBatchesInOrderAndShuffled) {
  CountingSource source(1000);
  for (bool shuffle : {false, true}) {
    for (bool drop : {false, true}) {
      BatchOptions o;
      o.batch_size = 64;
      o.shuffle = shuffle;
      o.seed = 7;
      o.drop_remainder = drop;
      Batcher batcher(source, 100, 901, o);
      BatchPrefetcher prefetcher(source, 100, 901, o, 3);
      ASSERT_EQ(prefetcher.num_batches(), batcher.num_batches());
      std::vector<Examples> got = All(prefetcher);
      ASSERT_EQ(static_cast<int64_t>(got.size()), batcher.num_batches());
      for (int64_t i = 0; i < batcher.num_batches(); ++i) {
        ExpectSameExamples(got[i], *batcher.Batch(i));
      }
    }
  }
}

TEST(BatchPrefetcher, ReadsAtMostDepthBatchesAheadInRecordOrder) {
  CountingSource source(10000);
  BatchOptions o;
  o.batch_size = 10;
  const int depth = 2;
  BatchPrefetcher p(source, 0, 10000, o, depth);
  int64_t taken = 0;
  for (;;) {
    // Queued (depth) and the one being pushed, beyond what was taken.
    ASSERT_LE(source.read(), (taken + depth + 1) * o.batch_size);
    auto next = p.Next();
    ASSERT_TRUE(next.ok());
    if (!next->has_value()) break;
    ++taken;
  }
  EXPECT_EQ(taken, 1000);
  EXPECT_EQ(source.read(), 10000);
}

TEST(BatchPrefetcher, HandsTheReadersErrorToTheCallerThenEnds) {
  CountingSource source(100, /*bad=*/45);
  BatchOptions o;
  o.batch_size = 10;
  BatchPrefetcher p(source, 0, 100, o, 2);
  int ok = 0;
  Status error;
  for (;;) {
    auto next = p.Next();
    if (!next.ok()) {
      error = next.status();
      break;
    }
    ASSERT_TRUE(next->has_value());
    ++ok;
  }
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(error.message(), "counting: record 45: bad");
  auto after = p.Next();
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->has_value());
}

TEST(BatchPrefetcher, StopsAReaderBlockedOnAFullQueueWhenDestroyed) {
  CountingSource source(100000);
  BatchOptions o;
  o.batch_size = 1;
  {
    BatchPrefetcher p(source, 0, 100000, o, 1);
    ASSERT_TRUE(p.Next().ok());
  }  // joins: the reader stops at the full queue instead of reading on
  EXPECT_LE(source.read(), 3);
}

TEST(BatchPrefetcher, CountsTheRecordsLeftOutAsCorruptAndSaysWhenItHasReadAll) {
  CountingSource source(100, /*bad=*/42, /*skip_bad=*/true);
  BatchOptions o;
  o.batch_size = 10;
  for (bool shuffle : {false, true}) {
    o.shuffle = shuffle;
    BatchPrefetcher p(source, 0, 100, o, 2);
    int64_t records = 0;
    for (;;) {
      auto next = p.Next();
      ASSERT_TRUE(next.ok()) << next.status().message();
      if (!next->has_value()) break;
      records += (*next)->size();
    }
    EXPECT_TRUE(p.finished_reading());
    EXPECT_EQ(records, 99) << "shuffle " << shuffle;
    EXPECT_EQ(p.records_skipped(), 1) << "shuffle " << shuffle;
  }
  // Not finished while the reader waits for room in the queue.
  CountingSource big(1000);
  o.shuffle = false;
  BatchPrefetcher blocked(big, 0, 1000, o, 1);
  ASSERT_TRUE(blocked.Next().ok());
  EXPECT_FALSE(blocked.finished_reading());
}

TEST(BatchPrefetcher, StreamsATaskOfAFileLikeTheLoadedFile) {
  TempDir dir;
  std::string text = "a,b,label\n";
  for (int i = 0; i < 5000; ++i) {
    text += std::to_string(i) + "," + std::to_string(i * 2) + "," + std::to_string(i % 2) + "\n";
  }
  const std::string path = dir.Write("t.csv.gz", text, /*gzip=*/true);
  auto spec = InputSpecFromJson(R"({"format": "csv", "label": "label"})", "input");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  OpenOptions streamed;
  streamed.stream = true;
  auto file = OpenSource(path, *spec, streamed);
  auto loaded = OpenSource(path, *spec);
  ASSERT_TRUE(file.ok() && loaded.ok());
  BatchOptions o;
  o.batch_size = 33;
  for (bool shuffle : {false, true}) {
    o.shuffle = shuffle;
    BatchPrefetcher a(**file, 1234, 4321, o, 4);
    Batcher b(**loaded, 1234, 4321, o);
    std::vector<Examples> got = All(a);
    ASSERT_EQ(static_cast<int64_t>(got.size()), b.num_batches());
    for (int64_t i = 0; i < b.num_batches(); ++i) ExpectSameExamples(got[i], *b.Batch(i));
  }
}

}  // namespace
}  // namespace edl::data
