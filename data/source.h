// Source: a data file as an array of records that can be read by any range
// [begin, end) or any list of indices. A source either loads its file into
// memory once when opened (IDX as bytes, CSV parsed and normalized), so
// reads are copies out of memory, or streams it from disk on demand
// (OpenOptions::stream). All methods are const and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/examples.h"
#include "data/input_spec.h"

namespace edl::data {

// Records of a range read in order, a few at a time, by one reader (a
// streamed file is opened once and never re-skipped): how a worker streams
// a task. Not thread-safe; borrows its Source.
class RecordCursor {
 public:
  virtual ~RecordCursor() = default;
  // The next min(n, left) records; an empty Examples after the last.
  virtual Result<Examples> Next(int64_t n) = 0;
};

class Source {
 public:
  virtual ~Source() = default;

  // The path it was opened from.
  virtual const std::string& name() const = 0;
  virtual int64_t num_records() const = 0;
  virtual bool has_labels() const = 0;
  // The inputs every Examples from this source holds, in order.
  virtual const std::vector<InputInfo>& inputs() const = 0;

  // Records [begin, end). InvalidArgument naming the source unless
  // 0 <= begin <= end <= num_records().
  virtual Result<Examples> Read(int64_t begin, int64_t end) const;
  // Records at `indices`, in that order (repeats allowed). InvalidArgument
  // naming the source and index when one is out of range.
  virtual Result<Examples> Gather(const std::vector<int64_t>& indices) const = 0;

  // What another process opens to read exactly these records: name(), and
  // for a database table the URL with the plan's bounds pinned
  // (data/sql_source.h).
  virtual std::string reopen_name() const { return name(); }

  // The records of each file of the data set, in order (one entry for a
  // single file); they sum to num_records().
  virtual std::vector<int64_t> file_records() const { return {num_records()}; }

  // Reads decode from disk (a streamed file) rather than copy out of
  // memory: reading a task ahead, while the one before trains, pays.
  virtual bool streamed() const { return false; }

  // Gather costs the same for any indices (each record is its own file):
  // a shuffled task is read a minibatch at a time instead of whole.
  virtual bool random_access() const { return false; }

  // Records left out so far because they were corrupt
  // (OpenOptions::skip_corrupt_records); reads return fewer records then.
  virtual int64_t corrupt_records_skipped() const { return 0; }

  // A cursor over records [begin, end); InvalidArgument as Read. The
  // default reads each step with Read (right for sources in memory).
  virtual Result<std::unique_ptr<RecordCursor>> OpenCursor(int64_t begin, int64_t end) const;

 protected:
  Status CheckIndices(const std::vector<int64_t>& indices) const;
  Status CheckRange(int64_t begin, int64_t end) const;
};

enum class LabelPolicy {
  kRequired,   // a missing labels file/column is an error (training data)
  kIfPresent,  // unlabeled data is fine (prediction data)
};

struct OpenOptions {
  LabelPolicy labels = LabelPolicy::kRequired;
  // Files read from disk on demand instead of loaded whole: CSV and
  // TFRecord through their record indexes (data/streamed_source.h), IDX at
  // each record's computed offset (data/streamed_idx_source.h; gzip IDX
  // through the access points of its record index).
  bool stream = false;
  std::string index_dir;  // where indexes go when the data's directory is read-only
  // Streamed and TFRecord files: corrupt records are logged, counted and
  // left out (StreamOptions::skip_corrupt_records).
  bool skip_corrupt_records = false;
  // Image files (format "images") decoded once when opened and held as
  // float pixels (records x height x width x channels x 4 bytes) instead
  // of decoded at every read: a worker's --data_in_memory. Every file must
  // decode then (skip_corrupt_records applies to streamed reads only).
  bool images_in_memory = false;
};

// Opens `path` as the format the spec names (or, for kAuto, the file name
// suggests: *.csv, *.csv.gz, *.tsv -> CSV; *.tfrecord[s], *.tfr (also .gz)
// -> TFRecord; *-ubyte, *-ubyte.gz, *.idx -> IDX).
// `path` may also name several files (a directory, a glob, a comma-separated
// list: data/data_paths.h), read one after another as one source whose
// name() is `path`. Errors name the file and what is wrong.
Result<std::unique_ptr<Source>> OpenSource(const std::string& path, const InputSpec& spec,
                                           const OpenOptions& options);
Result<std::unique_ptr<Source>> OpenSource(const std::string& path, const InputSpec& spec,
                                           LabelPolicy labels = LabelPolicy::kRequired);

}  // namespace edl::data
