// IdxData and IdxReader: an IDX file read from disk on demand. Record i's
// bytes start at header.bytes + i * RecordBytes() of the uncompressed data,
// so a plain file is read from that byte on and needs no index; a gzip file
// is read from the access point of its record index (RecordFormat::kIdx,
// data/record_index.h) at or before that byte, inflating at most about one
// access spacing (1-2 MiB) before it. Opening reads the header (and, for
// gzip, loads or builds the index), never the records.
// IdxData is immutable once opened (thread-safe to share); an IdxReader is
// one reader's position (not thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "data/byte_stream.h"
#include "data/idx_header.h"
#include "data/record_index.h"

namespace edl::data {

struct IdxData {
  std::string path;
  IdxHeader header;
  uint64_t file_size = 0;  // on disk, when opened
  bool gzip = false;
  RecordIndex index;  // gzip only: the access points

  // Opens `path`: reads and checks its header and that the data holds
  // exactly the header's records (a plain file by its size; a gzip file by
  // its index, built once by streaming it and cached as data/record_index.h
  // says, under `index_dir` when the data's directory is read-only). Errors
  // name the file and what is wrong (ParseIdxHeader, CheckIdxDataSize, a
  // truncated or corrupt gzip stream, NotFound).
  static Result<IdxData> Open(const std::string& path, const std::string& index_dir);
};

class IdxReader {
 public:
  // Reads `data`'s records from `first` on; `data` must outlive this.
  // REQUIRES: 0 <= first <= data.header.NumRecords().
  static Result<std::unique_ptr<IdxReader>> Open(const IdxData& data, int64_t first);

  // The bytes of the next n records into `out` (n * RecordBytes() of them).
  // Errors name the file and byte where the data ends early (changed since
  // it was opened) or the gzip stream is corrupt.
  Status Read(int64_t n, uint8_t* out);

  // The number of the record the next Read starts at.
  int64_t record() const { return next_; }

 private:
  IdxReader(const IdxData& data, std::unique_ptr<ByteStream> stream, int64_t next)
      : data_(data), stream_(std::move(stream)), next_(next) {}
  // Reads exactly n bytes into out; false when the data ends first.
  Result<bool> ReadFully(char* out, uint64_t n);

  const IdxData& data_;
  std::unique_ptr<ByteStream> stream_;
  int64_t next_;
};

}  // namespace edl::data
