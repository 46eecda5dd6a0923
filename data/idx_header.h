// IdxHeader: the header of an IDX file (the MNIST format), parsed and checked
// without reading the records, so that a process can count a file's records
// and find any record's bytes by arithmetic: record i starts at byte
// bytes + i * RecordBytes() of the (uncompressed) data.
//
// Format (big-endian): two zero bytes, a type byte (only 0x08, unsigned byte,
// is supported), a rank byte, then `rank` uint32 dimensions, then the elements
// row-major. dims[0] counts records. A plain value; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::data {

struct IdxHeader {
  std::vector<int64_t> dims;  // dims[0] = number of records
  uint64_t bytes = 0;         // 4 + 4 * rank: where record 0 starts

  int64_t NumRecords() const { return dims.empty() ? 0 : dims[0]; }
  // Bytes (elements) per record: the product of dims[1:] (1 for rank 1).
  int64_t RecordBytes() const;
  // "3 records of 2x3" / "3 records" (rank 1).
  std::string RecordsString() const;
};

// The longest header there is (rank 8).
constexpr size_t kMaxIdxHeader = 4 + 4 * 8;

// Parses the header from `prefix`, the file's first bytes (at least
// kMaxIdxHeader of them when the data has that many). InvalidArgument naming
// `path` and what is wrong: fewer than 4 bytes, a bad magic number, an
// unsupported element type, a header cut short, a record dimension of 0.
Result<IdxHeader> ParseIdxHeader(const std::string& path, const std::string& prefix);

// Whether `data_size` uncompressed bytes are exactly the header's records.
// InvalidArgument naming `path` otherwise, saying how many records the data
// does hold ("... holds 2 records and 5 bytes (truncated?)") or how many
// bytes are left over.
Status CheckIdxDataSize(const std::string& path, const IdxHeader& header, uint64_t data_size);

// Reads and checks the header of `path` (plain or gzip), inflating no more
// than the header. Errors as ParseIdxHeader, NotFound / IoError for a file
// that cannot be read.
Result<IdxHeader> ReadIdxHeader(const std::string& path);

}  // namespace edl::data
