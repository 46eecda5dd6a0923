// IndexPlanner: where a record index (data/record_index.h) keeps record
// offsets and, for gzip, asks its ByteStream for access points, as an
// indexer streams a file and reports each record's start.
//
// Once the records starting in the first `access_spacing` bytes are counted
// (n), points go just before the records numbered a multiple of `stride`,
// the power of two >= n (rounded to a multiple of `every`): points about
// access_spacing to twice that apart, and a task of a power-of-two size at
// least `stride` starts right after one instead of up to a spacing earlier.
// Records larger than a spacing / `every` make `every` smaller (a power of
// two >= n), so that offsets stay as dense as the points. A point is left
// out when it would come less than half a spacing after the last (records of
// very uneven sizes). Not thread-safe; one per indexing.
#pragma once

#include <cstdint>

#include "data/byte_stream.h"
#include "data/record_index.h"

namespace edl::data {

class IndexPlanner {
 public:
  // `index` and `stream` must outlive this; `index->every` is the densest
  // offsets wanted.
  IndexPlanner(RecordIndex* index, ByteStream& stream, const IndexOptions& options);

  // Record r starts at uncompressed offset `at`, already read from the
  // stream; records come in order.
  void OnRecord(uint64_t r, uint64_t at);

  // The points in order, each once (the stream's own and those asked for
  // come in their own orders).
  void Finish();

 private:
  RecordIndex* index_;
  ByteStream* stream_;  // null unless gzip
  uint64_t spacing_;
  uint64_t first_at_ = 0;
  uint64_t stride_ = 0;  // 0 until decided
  uint64_t last_at_ = 0;
};

}  // namespace edl::data
