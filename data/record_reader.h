// RecordReader: the records of an indexed file (data/record_index.h) from
// any record on, starting at the nearest index point (for gzip, at the
// nearest access point before it). Not thread-safe; one per task.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "data/buffered_input.h"
#include "data/byte_stream.h"
#include "data/record_index.h"

namespace edl::data {

// Reads records from `first` on, starting at the nearest index point.
class RecordReader {
 public:
  // The index must be fresh; a file changed since is reported by Next
  // (it ends early or frames go wrong), naming the file and offset.
  static Result<std::unique_ptr<RecordReader>> Open(const RecordIndex& index, uint64_t first);

  // The next record: a CSV row without its line end, or a TFRecord's
  // payload (both checksums verified). false at the end of the file.
  Result<bool> Next(std::string* record);
  // After an error from Next: whether it was one record's own (a TFRecord
  // payload checksum) and the reader has moved past that record, so reading
  // on is possible (--skip_corrupt_records). false for framing errors.
  bool passed_bad_record() const { return passed_bad_record_; }
  // The number of the record the next call returns.
  uint64_t record() const { return record_; }
  // Uncompressed offset of that record.
  uint64_t offset() const { return in_.offset(); }

 private:
  RecordReader(const RecordIndex& index, std::unique_ptr<ByteStream> stream);
  Result<bool> NextCsvRow(std::string* row);
  Result<bool> NextTfRecord(std::string* payload);
  Status Skip(uint64_t records);

  const RecordIndex& index_;
  std::unique_ptr<ByteStream> stream_;
  BufferedInput in_;
  uint64_t record_ = 0;
  bool skipping_ = false;  // TFRecord payloads are neither checked nor copied
  bool passed_bad_record_ = false;
};

}  // namespace edl::data
