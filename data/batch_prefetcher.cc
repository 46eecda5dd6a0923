#include "data/batch_prefetcher.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/check.h"
#include "data/examples_source.h"

namespace edl::data {

BatchPrefetcher::BatchPrefetcher(const Source& source, int64_t begin, int64_t end,
                                 BatchOptions options, int depth)
    : source_(source),
      begin_(begin),
      end_(end),
      options_(options),
      depth_(static_cast<size_t>(depth)) {
  EDL_CHECK(begin <= end && options.batch_size > 0 && depth >= 1);
  const int64_t n = end - begin, b = options.batch_size;
  num_batches_ = options.drop_remainder ? n / b : (n + b - 1) / b;
  if (num_batches_ > 0) reader_ = std::thread([this] { Run(); });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (reader_.joinable()) reader_.join();
}

bool BatchPrefetcher::Push(Result<Examples> batch) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_ || queue_.size() < depth_; });
  if (stop_) return false;
  queue_.push_back(std::move(batch));
  cv_.notify_all();
  return true;
}

void BatchPrefetcher::Run() {
  Produce();
  finished_reading_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
}

void BatchPrefetcher::Produce() {
  const int64_t size = options_.batch_size;
  if (!options_.shuffle) {
    auto cursor = source_.OpenCursor(begin_, end_);
    if (!cursor.ok()) {
      Push(cursor.status());
      return;
    }
    int64_t left = end_ - begin_;
    int64_t at = begin_;
    while (left > 0 && (left >= size || !options_.drop_remainder)) {
      // A full batch unless the range ends (records skipped as corrupt are
      // made up from the records after them).
      std::vector<Examples> pieces;
      int64_t have = 0;
      while (have < size && left > 0) {
        const int64_t take = std::min(size - have, left);
        Result<Examples> piece = (*cursor)->Next(take);
        if (!piece.ok()) {
          Push(piece.status());
          return;
        }
        std::vector<int64_t> indices(static_cast<size_t>(take));
        for (int64_t k = 0; k < take; ++k) indices[k] = at + k;
        LabelRecords(*piece, std::move(indices));
        at += take;
        left -= take;
        have += piece->size();
        records_skipped_ += take - piece->size();
        if (piece->size() > 0) pieces.push_back(std::move(*piece));
      }
      if (have == 0 || (have < size && options_.drop_remainder)) return;
      if (!Push(JoinExamples(std::move(pieces)))) return;
    }
    return;
  }
  if (source_.random_access()) {
    // Each minibatch's records read when it is due: memory is a few
    // minibatches, not the task (image files).
    Batcher batcher(source_, begin_, end_, options_);
    for (int64_t i = 0; i < batcher.num_batches(); ++i) {
      Result<Examples> batch = batcher.Batch(i);
      const bool ok = batch.ok();
      if (ok) {
        const int64_t wanted =
            std::min(options_.batch_size, (end_ - begin_) - i * options_.batch_size);
        records_skipped_ += wanted - batch->size();
      }
      if (!Push(std::move(batch)) || !ok) return;
    }
    return;
  }
  auto records = ReadIntoMemory(source_, begin_, end_);
  if (!records.ok()) {
    Push(records.status());
    return;
  }
  records_skipped_ = (end_ - begin_) - (*records)->num_records();
  finished_reading_ = true;
  Batcher batcher(**records, 0, (*records)->num_records(), options_);
  // (The records in memory know their indices in the data set:
  // ReadIntoMemory.)
  for (int64_t i = 0; i < batcher.num_batches(); ++i) {
    Result<Examples> batch = batcher.Batch(i);
    const bool ok = batch.ok();
    if (!Push(std::move(batch)) || !ok) return;
  }
}

Result<std::optional<Examples>> BatchPrefetcher::Next() {
  if (failed_ || num_batches_ == 0) return std::optional<Examples>();
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !queue_.empty() || done_; });
  stall_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (queue_.empty()) return std::optional<Examples>();
  Result<Examples> batch = std::move(queue_.front());
  queue_.pop_front();
  cv_.notify_all();
  lock.unlock();
  if (!batch.ok()) {
    failed_ = true;
    return batch.status();
  }
  return std::optional<Examples>(std::move(*batch));
}

}  // namespace edl::data
