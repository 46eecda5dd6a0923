// RecordIndex: where the records of a data file start, built by streaming
// the file once with bounded memory, so that a process can count a file's
// records without holding it and a reader can start near any record without
// decoding what comes before.
//
// Records are the rows of a CSV file (quote-aware as data/csv_reader.h: a
// newline inside a quoted field does not end a row, a quote opens a field
// only at its start; empty rows are not records), the records of a
// TFRecord file (length-framed, both CRC-32Cs checked when read) or the
// fixed-size records of an IDX file after its header. The index
// keeps the uncompressed offset of every `every`-th record and, for gzip
// files, an access point about every `access_spacing` bytes of output, just
// before a record (see IndexOptions and data/byte_stream.h; its 32 KiB
// window is kept deflated in the index file and read only by a reader that
// starts there). It is saved to a small file (".<name>.edlidx" beside the
// data when that directory is writable, else under an index directory) and
// reused while the data file's size and modification time match.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/byte_stream.h"

namespace edl::data {

// kIdx: the fixed-size records of an IDX file (data/idx_header.h), indexed
// only for gzip files, for their access points; read with IdxReader
// (data/idx_reader.h), not RecordReader.
enum class RecordFormat : uint8_t { kCsvRows = 1, kTfRecord = 2, kIdx = 3 };
const char* RecordFormatName(RecordFormat f);

struct IndexOptions {
  // Records between offsets (at most: fewer for records so large that the
  // access points below need denser offsets).
  uint64_t every = 1024;
  char delimiter = ',';  // CSV: a quote opens a field only after one
  // gzip: about how many output bytes between access points (1 to 2 times
  // this), placed just before records numbered a multiple of a power of
  // two, so that tasks of a power-of-two size start right after one.
  uint64_t access_spacing = 1ull << 20;
};

struct RecordIndex {
  std::string path;
  RecordFormat format = RecordFormat::kCsvRows;
  bool gzip = false;
  char delimiter = ',';    // CSV rows: the field delimiter (quotes open fields after it)
  uint64_t file_size = 0;  // of the file on disk, when indexed
  int64_t file_mtime_ns = 0;
  uint64_t num_records = 0;
  uint64_t data_size = 0;  // uncompressed bytes
  uint64_t every = 1024;
  std::vector<uint64_t> offsets;        // [i]: uncompressed offset of record i * every
  std::vector<GzipAccessPoint> access;  // ascending out_offset; empty unless gzip
  // Loaded from a cache file: the access points' windows stay there and a
  // reader reads the one it starts at (LoadAccessWindow), so an index in
  // memory holds about 50 bytes per access point, whatever the file's size.
  std::string window_file;
  uint64_t window_file_size = 0;
};

// The window of `point` (of `index`), from memory or read from the index
// file and checked against the CRC-32C taken when the index was loaded.
// Errors name the index file (changed or removed since it was loaded).
Result<std::string> LoadAccessWindow(const RecordIndex& index, const GzipAccessPoint& point);

// Streams `path` once. `progress` (optional) gets the compressed bytes read
// so far now and then. Errors name the file and the byte offset: a
// truncated TFRecord, a bad length checksum, a truncated gzip member or one
// whose CRC-32 is wrong, an unterminated quoted CSV field. Only the framing
// is checked: TFRecord payload checksums and whether records decode are
// left to readers and to VerifyRecords (data/record_verifier.h).
Result<RecordIndex> BuildRecordIndex(const std::string& path, RecordFormat format,
                                     const IndexOptions& options = {},
                                     const std::function<void(uint64_t)>& progress = nullptr);

// REQUIRES: the windows in memory (a freshly built index).
std::string SerializeRecordIndex(const RecordIndex& index);
// `where` names the index file in errors (bad magic, version, checksum).
// With `lazy_windows`, the access points' windows are left in the file
// `where` (whose size must be bytes.size()) and read when needed.
Result<RecordIndex> ParseRecordIndex(const std::string& bytes, const std::string& where,
                                     bool lazy_windows = false);

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

// The cached index of `path` when there is one and it is fresh (same size
// and mtime, same format and CSV delimiter), its windows left in the cache
// file; else nullopt (a cache that does not parse is logged).
std::optional<RecordIndex> LoadFreshRecordIndex(const std::string& path, RecordFormat format,
                                                const std::string& index_dir,
                                                const IndexOptions& options = {});

// The cached index when fresh (same size and mtime, same format), else a
// new one, built and saved (atomically; a cache that cannot be written is
// logged, not an error). *built says which.
Result<RecordIndex> LoadOrBuildRecordIndex(const std::string& path, RecordFormat format,
                                           const std::string& index_dir,
                                           const IndexOptions& options = {}, bool* built = nullptr);

}  // namespace edl::data
