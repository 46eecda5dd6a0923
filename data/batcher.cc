#include "data/batcher.h"

#include <algorithm>
#include <numeric>

#include "data/rng.h"

namespace edl::data {

Batcher::Batcher(const Source& source, int64_t begin, int64_t end, BatchOptions options)
    : source_(source), begin_(begin), end_(end), options_(options) {
  EDL_CHECK_LE(begin, end);
  EDL_CHECK_GT(options.batch_size, 0);
  StartEpoch(0);
}

void Batcher::StartEpoch(int64_t epoch) {
  order_.resize(end_ - begin_);
  std::iota(order_.begin(), order_.end(), begin_);
  if (options_.shuffle) {
    Rng rng(MixSeed(options_.seed, static_cast<uint64_t>(epoch)));
    rng.Shuffle(order_);
  }
  next_ = 0;
}

int64_t Batcher::num_batches() const {
  int64_t n = end_ - begin_;
  int64_t b = options_.batch_size;
  return options_.drop_remainder ? n / b : (n + b - 1) / b;
}

Result<Examples> Batcher::Batch(int64_t i) const {
  EDL_CHECK(i >= 0 && i < num_batches()) << "batch " << i << " of " << num_batches();
  int64_t from = i * options_.batch_size;
  int64_t to = std::min<int64_t>(from + options_.batch_size, order_.size());
  std::vector<int64_t> indices(order_.begin() + from, order_.begin() + to);
  Result<Examples> batch = options_.shuffle
                               ? source_.Gather(indices)
                               : source_.Read(order_[from], order_[from] + (to - from));
  if (batch.ok()) LabelRecords(*batch, std::move(indices));
  return batch;
}

Result<std::optional<Examples>> Batcher::Next() {
  if (next_ >= num_batches()) return std::optional<Examples>();
  EDL_ASSIGN_OR_RETURN(Examples batch, Batch(next_));
  ++next_;
  return std::optional<Examples>(std::move(batch));
}

}  // namespace edl::data
