// RecordScanner: the records of an indexed file (data/record_index.h) in
// order from any record on, each checked beyond the framing that indexing
// checks, as `edl data index --verify` and `edl data inspect` read them:
//  * TFRecord: the payload's masked CRC-32C (data/record_reader.h) and that
//    it parses as a tf.train.Example (ExampleParser, the parser training
//    reads records with);
//  * CSV rows: that the row splits into fields as data/csv_reader.h splits
//    it (nothing but a delimiter or the row's end after a closing quote)
//    and has as many fields as the file's first row (its header).
// Errors name the file, the record and its byte offset. Not thread-safe:
// one per thread (the index may be shared).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "data/record_index.h"
#include "data/record_reader.h"
#include "data/tf_example.h"

namespace edl::data {

class RecordScanner {
 public:
  // Reads from record `first` on (a CSV file's first row is read once more
  // to count its fields). The index must outlive the scanner.
  static Result<std::unique_ptr<RecordScanner>> Open(const RecordIndex& index, uint64_t first);

  // Reads and checks the next record: true with record() set, false at the
  // end of the file, or the error of the record number() names.
  Result<bool> Next();

  // The TFRecord payload or CSV row (without its line end) last read.
  const std::string& record() const { return record_; }
  // The number (0-based) and uncompressed byte offset of the record last
  // read, or of the one whose error Next returned.
  uint64_t number() const { return number_; }
  uint64_t offset() const { return offset_; }
  // "x.tfrecord: record 7 at byte 1234" / "x.csv: row 8 at byte 1234"
  // (rows are 1-based: the header is row 1).
  std::string Where() const;

 private:
  RecordScanner(const RecordIndex& index, std::unique_ptr<RecordReader> reader)
      : index_(index), reader_(std::move(reader)) {}
  Status CheckCsvRow() const;

  const RecordIndex& index_;
  std::unique_ptr<RecordReader> reader_;
  ExampleParser examples_;  // TFRecord
  size_t csv_fields_ = 0;   // CSV: the first row's
  std::string record_;
  uint64_t number_ = 0;
  uint64_t offset_ = 0;
};

// The number of fields of a CSV row (without its line end) as
// data/csv_reader.h splits it; InvalidArgument (what is wrong, for the
// caller to prefix with where the row is) when it cannot be split.
Result<size_t> CsvFieldCount(const std::string& row, char delimiter);

}  // namespace edl::data
