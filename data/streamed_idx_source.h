// StreamedIdxSource: an IDX images file and its labels file (data/idx_images.h
// says what the records are) read from disk on demand (data/idx_reader.h),
// as StreamedSource reads CSV and TFRecord. Opening reads the two headers
// (and, for gzip, loads or builds their record indexes), never the records;
// Read(begin, end) reads only the bytes of [begin, end) of each file (for
// gzip from the access point before them). Memory: the indexes (about 50
// bytes per access point, 1-2 MiB of data) plus what one call returns and a
// reader's buffers (a few hundred KiB), whatever the files' sizes.
// Const and thread-safe: every call reads with readers of its own.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/idx_reader.h"
#include "data/source.h"

namespace edl::data {

class StreamedIdxSource : public Source {
 public:
  // Errors name the file: as IdxSource::Open, and an index that cannot be
  // built. `index_dir`: where gzip files' indexes go when the data's
  // directory is read-only.
  static Result<std::unique_ptr<StreamedIdxSource>> Open(const std::string& path,
                                                         const IdxSpec& spec, LabelPolicy labels,
                                                         const std::string& index_dir);

  const std::string& name() const override { return images_.path; }
  int64_t num_records() const override { return images_.header.NumRecords(); }
  bool has_labels() const override { return labels_.has_value(); }
  const std::vector<InputInfo>& inputs() const override { return inputs_; }
  bool streamed() const override { return true; }
  // Errors name the file and byte where it ends early (changed since it was
  // opened) or its gzip stream is corrupt.
  Result<Examples> Read(int64_t begin, int64_t end) const override;
  // Reads the records from the smallest index to the largest (callers
  // gather from one task's range at a time).
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;
  // Reads [begin, end) with one reader per file, each step only the records
  // it returns.
  Result<std::unique_ptr<RecordCursor>> OpenCursor(int64_t begin, int64_t end) const override;

 private:
  class Cursor;
  StreamedIdxSource() = default;

  IdxData images_;
  std::optional<IdxData> labels_;
  float scale_ = 1.0f;
  float offset_ = 0.0f;
  std::vector<InputInfo> inputs_;
};

}  // namespace edl::data
