// IdxArray: one IDX file (the MNIST format, raw or gzip; data/idx_header.h)
// loaded in memory, for sources that load their data (local training, and
// --data_in_memory); distributed jobs stream IDX files instead
// (data/streamed_idx_source.h). Immutable once read, so thread-safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/idx_header.h"

namespace edl::data {

struct IdxArray {
  std::vector<int64_t> dims;  // dims[0] = number of records
  std::string payload;        // NumRecords() * RecordSize() uint8 elements

  int64_t NumRecords() const { return dims.empty() ? 0 : dims[0]; }
  // Elements per record: the product of dims[1:] (1 for a rank-1 file).
  int64_t RecordSize() const;
  const uint8_t* Record(int64_t i) const {
    return reinterpret_cast<const uint8_t*>(payload.data()) + i * RecordSize();
  }
};

// Reads and validates an IDX file. Every problem is an error naming the
// file and what is wrong: NotFound, IoError (unreadable, corrupt gzip) or
// InvalidArgument (as ParseIdxHeader and CheckIdxDataSize say).
Result<IdxArray> ReadIdxFile(const std::string& path);

// Encodes an IDX file (for tests and tools). REQUIRES: payload size matches.
std::string EncodeIdx(const std::vector<int64_t>& dims, const std::vector<uint8_t>& payload);

}  // namespace edl::data
