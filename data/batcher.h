// Batcher: cuts the records [begin, end) of a Source into batches, in order
// or in a seeded shuffled order that is the same on every machine for the
// same seed and epoch (data/rng.h). Each epoch visits every record of the
// range exactly once (the last, smaller batch is dropped when
// drop_remainder is set).
//
// Batch(i) is const and thread-safe; StartEpoch and Next are not. The
// Batcher borrows the Source, which must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/status.h"
#include "data/examples.h"
#include "data/source.h"

namespace edl::data {

struct BatchOptions {
  int64_t batch_size = 32;  // > 0
  bool shuffle = false;
  uint64_t seed = 0;
  bool drop_remainder = false;
};

class Batcher {
 public:
  // Starts epoch 0. REQUIRES: begin <= end, options.batch_size > 0. A range
  // outside the source surfaces as an error from Batch/Next.
  Batcher(const Source& source, int64_t begin, int64_t end, BatchOptions options);

  // Restarts at the first batch; with shuffle, in the order of
  // MixSeed(seed, epoch).
  void StartEpoch(int64_t epoch);

  int64_t num_batches() const;
  // Batch i of the current epoch. REQUIRES: 0 <= i < num_batches().
  Result<Examples> Batch(int64_t i) const;
  // The next batch of the current epoch, or nullopt after the last.
  Result<std::optional<Examples>> Next();

  // The record indices of the current epoch, in visiting order.
  const std::vector<int64_t>& order() const { return order_; }

 private:
  const Source& source_;
  int64_t begin_;
  int64_t end_;
  BatchOptions options_;
  std::vector<int64_t> order_;
  int64_t next_ = 0;
};

}  // namespace edl::data
