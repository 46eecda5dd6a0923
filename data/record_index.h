// RecordIndex: where the records of a data file start, built by streaming
// the file once with bounded memory, so that a process can count a file's
// records without holding it and a reader can start near any record without
// decoding what comes before.
//
// Records are the rows of a CSV file (quote-aware as data/csv_reader.h: a
// newline inside a quoted field does not end a row, a quote opens a field
// only at its start; empty rows are not records) or the records of a
// TFRecord file (length-framed, both CRC-32Cs checked when read). The index
// keeps the uncompressed offset of every `every`-th record and, for gzip
// files, an access point every `access_spacing` bytes of output (see
// data/byte_stream.h). It is saved to a small file (".<name>.edlidx" beside
// the data when that directory is writable, else under an index directory)
// and reused while the data file's size and modification time match.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/byte_stream.h"

namespace edl::data {

enum class RecordFormat : uint8_t { kCsvRows = 1, kTfRecord = 2 };
const char* RecordFormatName(RecordFormat f);

struct IndexOptions {
  uint64_t every = 1024;                   // records between offsets
  char delimiter = ',';                    // CSV: a quote opens a field only after one
  uint64_t access_spacing = 8ull << 20;    // gzip: output bytes between access points
};

struct RecordIndex {
  std::string path;
  RecordFormat format = RecordFormat::kCsvRows;
  bool gzip = false;
  char delimiter = ',';        // CSV rows: the field delimiter (quotes open fields after it)
  uint64_t file_size = 0;      // of the file on disk, when indexed
  int64_t file_mtime_ns = 0;
  uint64_t num_records = 0;
  uint64_t data_size = 0;      // uncompressed bytes
  uint64_t every = 1024;
  std::vector<uint64_t> offsets;  // [i]: uncompressed offset of record i * every
  std::vector<GzipAccessPoint> access;  // ascending out_offset; empty unless gzip
};

// Streams `path` once. `progress` (optional) gets the compressed bytes read
// so far now and then. Errors name the file and the byte offset: a
// truncated TFRecord, a bad length checksum, a truncated gzip member, an
// unterminated quoted CSV field.
Result<RecordIndex> BuildRecordIndex(const std::string& path, RecordFormat format,
                                     const IndexOptions& options = {},
                                     const std::function<void(uint64_t)>& progress = nullptr);

std::string SerializeRecordIndex(const RecordIndex& index);
// `where` names the index file in errors (bad magic, version, checksum).
Result<RecordIndex> ParseRecordIndex(const std::string& bytes, const std::string& where);

// Whether the file at index.path still has the size and mtime it had.
Status CheckIndexFresh(const RecordIndex& index);

// Where the index of `path` is cached: beside it when its directory is
// writable, else under index_dir ("" = none: beside it regardless).
std::string IndexCachePath(const std::string& path, const std::string& index_dir);
// The same with the directory's writability given (tests).
std::string IndexCachePath(const std::string& path, const std::string& index_dir,
                           bool data_dir_writable);

// Saves `index` where IndexCachePath(index.path, index_dir) says, atomically.
Status SaveRecordIndex(const RecordIndex& index, const std::string& index_dir);

// The format a file name suggests: *.tfrecord, *.tfrecords, *.tfr (also
// .gz) are TFRecord; *.csv, *.tsv, *.txt (also .gz) are CSV rows.
// InvalidArgument naming the file otherwise.
Result<RecordFormat> RecordFormatFromName(const std::string& path);

// The cached index when fresh (same size and mtime, same format), else a
// new one, built and saved (atomically; a cache that cannot be written is
// logged, not an error). *built says which.
Result<RecordIndex> LoadOrBuildRecordIndex(const std::string& path, RecordFormat format,
                                           const std::string& index_dir,
                                           const IndexOptions& options = {},
                                           bool* built = nullptr);

}  // namespace edl::data
