// StreamedSource: one CSV or TFRecord file read from disk on demand, record
// by record, through its record index (data/record_index.h). Opening it
// loads or builds the index (never holding the file), reads the header rows
// (CSV) or the first record (TFRecord) to resolve the spec, and nothing
// more; Read(begin, end) starts at the index point nearest `begin` and
// decodes only [begin, end). Memory: the index plus what one call returns.
// Const and thread-safe: every call reads with a reader of its own.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "data/column_buffer.h"
#include "data/record_index.h"
#include "data/source.h"

namespace edl::data {

struct StreamOptions {
  LabelPolicy labels = LabelPolicy::kRequired;
  // Where indexes are cached when the data's directory is not writable
  // ("" = beside the data only).
  std::string index_dir;
  // A record that fails on its own (a TFRecord payload checksum, a record
  // the spec cannot decode) is logged, counted and left out instead of
  // failing the read. Framing errors (truncation, a changed file) still fail.
  bool skip_corrupt_records = false;
};

class StreamedSource : public Source {
 public:
  // `format` is kCsv or kTfRecord. Errors name the file: unreadable, an
  // index that cannot be built (and where), a spec that does not fit.
  static Result<std::unique_ptr<StreamedSource>> Open(const std::string& path,
                                                      const InputSpec& spec, DataFormat format,
                                                      const StreamOptions& options);
  ~StreamedSource() override;

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return num_records_; }
  bool has_labels() const override;
  const std::vector<InputInfo>& inputs() const override;
  // Errors name the file and the record ("x.tfrecord: record 17 (byte
  // 4242): ..."): a bad checksum, a record the spec cannot decode, a file
  // that changed or vanished since it was indexed.
  Result<Examples> Read(int64_t begin, int64_t end) const override;
  // Decodes the records from the smallest index to the largest (callers
  // gather from one task's range at a time).
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;

  // Reads [begin, end) with one reader, opened at the index point nearest
  // `begin`: each step decodes only the records it returns.
  Result<std::unique_ptr<RecordCursor>> OpenCursor(int64_t begin, int64_t end) const override;

  // Decodes records [begin, end) into `out`.
  Status DecodeRange(int64_t begin, int64_t end, ColumnBuffer* out) const;
  const ColumnLayout& layout() const;
  int64_t corrupt_records_skipped() const override { return skipped_; }
  bool streamed() const override { return true; }

  // One record's bytes to its values (CSV rows or Examples); internal.
  class Decoder;

 private:
  class Cursor;
  StreamedSource() = default;
  Result<std::unique_ptr<Cursor>> OpenStreamCursor(int64_t begin, int64_t end) const;

  std::string name_;
  RecordIndex index_;
  int64_t skip_ = 0;  // records before the data (CSV: skipped rows and the header)
  int64_t num_records_ = 0;
  std::unique_ptr<Decoder> decoder_;
  bool skip_corrupt_ = false;
  mutable std::atomic<int64_t> skipped_{0};
};

}  // namespace edl::data
