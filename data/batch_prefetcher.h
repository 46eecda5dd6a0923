// BatchPrefetcher: one task's minibatches, made by a reader thread at most
// `depth` batches ahead of the caller, so reading and decoding overlap
// training. The batches are exactly a Batcher's (data/batcher.h) over the
// same range and options:
//  * in record order (no shuffle), the reader streams [begin, end) through
//    one cursor (Source::OpenCursor), a batch at a time: memory
//    O(depth x batch), whatever the task's size;
//  * shuffled, the task is the shuffle unit: the reader reads its records in
//    one pass, then cuts batches in the seeded order: memory
//    O(task + depth x batch).
// Not thread-safe (one caller); the destructor stops and joins the reader.
// Borrows the Source, which must outlive it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/status.h"
#include "data/batcher.h"
#include "data/source.h"

namespace edl::data {

// How far ahead workers read: enough to hide a slow read behind a few
// training steps, little enough that the memory stays a few batches.
inline constexpr int kPrefetchBatches = 4;

class BatchPrefetcher {
 public:
  // REQUIRES: begin <= end, options.batch_size > 0, depth >= 1. A range
  // outside the source surfaces as an error from Next.
  BatchPrefetcher(const Source& source, int64_t begin, int64_t end, BatchOptions options,
                  int depth);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The batches of the range; fewer when records are skipped as corrupt
  // (OpenOptions::skip_corrupt_records).
  int64_t num_batches() const { return num_batches_; }
  // The next batch, waiting for the reader if it is behind; nullopt after
  // the last; the reader's error (the source's, naming file and record),
  // after which there are no more batches.
  Result<std::optional<Examples>> Next();
  // Seconds Next spent waiting for the reader (input stalls).
  double stall_seconds() const { return stall_seconds_; }
  // The reader has read its last record (its batches may still be queued):
  // a good moment to start reading the next task.
  bool finished_reading() const { return finished_reading_.load(); }
  // Records of the range left out as corrupt; final once Next has returned
  // nullopt or an error.
  int64_t records_skipped() const { return records_skipped_.load(); }

 private:
  void Run();
  void Produce();
  // Queues a batch or an error; false when stopped meanwhile.
  bool Push(Result<Examples> batch);

  const Source& source_;
  const int64_t begin_;
  const int64_t end_;
  const BatchOptions options_;
  const size_t depth_;
  int64_t num_batches_ = 0;
  bool failed_ = false;
  double stall_seconds_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result<Examples>> queue_;  // guarded by mu_
  bool stop_ = false;                   // guarded by mu_
  bool done_ = false;                   // the reader has finished; guarded by mu_
  std::atomic<bool> finished_reading_{false};
  std::atomic<int64_t> records_skipped_{0};
  std::thread reader_;
};

}  // namespace edl::data
