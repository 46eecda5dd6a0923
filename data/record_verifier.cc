#include "data/record_verifier.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <thread>

#include "data/record_scanner.h"

namespace edl::data {
namespace {

// Records [begin, end) of file `file`: bytes [begin_at, end_at).
struct Range {
  size_t file = 0;
  uint64_t begin = 0, end = 0;
  uint64_t begin_at = 0, end_at = 0;
};

// Cuts a file at its index points into ranges of about `range_bytes`.
void AddRanges(const RecordIndex& index, size_t file, uint64_t range_bytes,
               std::vector<Range>* out) {
  if (index.num_records == 0 || index.offsets.empty()) return;
  Range r{file, 0, 0, index.offsets[0], 0};
  for (size_t k = 1; k < index.offsets.size(); ++k) {
    if (index.offsets[k] - r.begin_at < range_bytes) continue;
    r.end = k * index.every;
    r.end_at = index.offsets[k];
    out->push_back(r);
    r.begin = r.end;
    r.begin_at = r.end_at;
  }
  r.end = index.num_records;
  r.end_at = index.data_size;
  out->push_back(r);
}

// The first bad record of each file found so far, and its error.
class Verdicts {
 public:
  explicit Verdicts(size_t files) : first_bad_(files), status_(files) {
    for (auto& b : first_bad_) b = kNone;
  }
  // Whether record `r` of `file` may still come before the first bad one.
  bool Matters(size_t file, uint64_t r) const {
    return r < first_bad_[file].load(std::memory_order_relaxed);
  }
  void Bad(size_t file, uint64_t r, Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r >= first_bad_[file].load()) return;
    first_bad_[file] = r;
    status_[file] = std::move(status);
  }
  std::vector<Status> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(status_);
  }

 private:
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  std::vector<std::atomic<uint64_t>> first_bad_;  // written under mu_
  std::mutex mu_;
  std::vector<Status> status_;  // guarded by mu_
};

void VerifyRange(const RecordIndex& index, const Range& range, Verdicts& verdicts,
                 std::atomic<uint64_t>* checked_bytes) {
  auto scanner = RecordScanner::Open(index, range.begin);
  if (!scanner.ok()) {
    verdicts.Bad(range.file, range.begin, scanner.status());
    return;
  }
  RecordScanner& s = **scanner;
  constexpr uint64_t kReport = 1 << 20;
  uint64_t reported_at = range.begin_at;
  for (uint64_t r = range.begin; r < range.end; ++r) {
    if (!verdicts.Matters(range.file, r)) return;  // a bad record came before
    Result<bool> got = s.Next();
    if (!got.ok()) {
      verdicts.Bad(range.file, s.number(), got.status());
      return;
    }
    if (!*got) {
      verdicts.Bad(range.file, r,
                   InvalidArgument(index.path + ": ends before record " + std::to_string(r) +
                                   ", the index counted " + std::to_string(index.num_records) +
                                   " (changed since it was indexed?)"));
      return;
    }
    if (checked_bytes && s.offset() - reported_at >= kReport) {
      *checked_bytes += s.offset() - reported_at;
      reported_at = s.offset();
    }
  }
  if (checked_bytes) *checked_bytes += range.end_at - reported_at;
}

}  // namespace

std::vector<Status> VerifyRecords(const std::vector<const RecordIndex*>& indexes,
                                  const VerifyOptions& options) {
  const int threads = std::max(1, options.threads);
  uint64_t range_bytes = options.range_bytes;
  if (range_bytes == 0) {
    uint64_t total = 0;
    for (const RecordIndex* index : indexes) total += index->data_size;
    range_bytes =
        std::clamp<uint64_t>(total / (4 * static_cast<uint64_t>(threads)), 4ull << 20, 64ull << 20);
  }
  // In file order, each file's ranges in record order: a range is handed
  // out before any that comes after it, so the first bad record found is
  // the file's first whatever the threads.
  std::vector<Range> ranges;
  for (size_t i = 0; i < indexes.size(); ++i) AddRanges(*indexes[i], i, range_bytes, &ranges);
  Verdicts verdicts(indexes.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < ranges.size(); i = next++) {
      const Range& r = ranges[i];
      if (verdicts.Matters(r.file, r.begin)) {
        VerifyRange(*indexes[r.file], r, verdicts, options.checked_bytes);
      }
    }
  };
  const int n = static_cast<int>(std::min<size_t>(threads, ranges.size()));
  if (n <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
  }
  return verdicts.Take();
}

}  // namespace edl::data
