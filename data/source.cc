#include "data/source.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "data/concat_source.h"
#include "data/csv_source.h"
#include "data/data_paths.h"
#include "data/examples_source.h"
#include "data/idx_source.h"
#include "data/image_source.h"
#include "data/sql_source.h"
#include "data/streamed_idx_source.h"
#include "data/streamed_source.h"

namespace edl::data {
namespace {

Result<DataFormat> DetectFormat(const std::string& path) {
  switch (FileKindFromName(path)) {
    case FileKind::kCsv:
    case FileKind::kTsv: return DataFormat::kCsv;
    case FileKind::kIdx: return DataFormat::kIdx;
    case FileKind::kTfRecord: return DataFormat::kTfRecord;
    default: break;
  }
  return InvalidArgument(path +
                         ": cannot tell the data format from the file "
                         "name (expected *.csv[.gz], *.tsv, *.tfrecord[.gz] or *-ubyte[.gz]); "
                         "set \"format\" in the model spec's input");
}

}  // namespace

Status Source::CheckIndices(const std::vector<int64_t>& indices) const {
  int64_t n = num_records();
  for (int64_t i : indices) {
    if (i < 0 || i >= n) {
      return InvalidArgument(name() + ": record " + std::to_string(i) + " is out of range [0, " +
                             std::to_string(n) + ")");
    }
  }
  return Status::Ok();
}

Status Source::CheckRange(int64_t begin, int64_t end) const {
  if (begin < 0 || begin > end || end > num_records()) {
    return InvalidArgument(name() + ": record range [" + std::to_string(begin) + ", " +
                           std::to_string(end) + ") is not within [0, " +
                           std::to_string(num_records()) + ")");
  }
  return Status::Ok();
}

Result<Examples> Source::Read(int64_t begin, int64_t end) const {
  EDL_RETURN_IF_ERROR(CheckRange(begin, end));
  std::vector<int64_t> indices(end - begin);
  std::iota(indices.begin(), indices.end(), begin);
  return Gather(indices);
}

namespace {

class ReadingCursor : public RecordCursor {
 public:
  ReadingCursor(const Source& source, int64_t begin, int64_t end)
      : source_(source), next_(begin), end_(end) {}
  Result<Examples> Next(int64_t n) override {
    const int64_t stop = std::min(end_, next_ + std::max<int64_t>(n, 0));
    auto e = source_.Read(next_, stop);
    if (e.ok()) next_ = stop;
    return e;
  }

 private:
  const Source& source_;
  int64_t next_;
  int64_t end_;
};

}  // namespace

Result<std::unique_ptr<RecordCursor>> Source::OpenCursor(int64_t begin, int64_t end) const {
  EDL_RETURN_IF_ERROR(CheckRange(begin, end));
  return std::unique_ptr<RecordCursor>(new ReadingCursor(*this, begin, end));
}

namespace {

Result<std::unique_ptr<Source>> OpenFile(const std::string& path, const InputSpec& spec,
                                         const OpenOptions& options) {
  DataFormat format = spec.format;
  if (format == DataFormat::kAuto) {
    EDL_ASSIGN_OR_RETURN(format, DetectFormat(path));
  }
  if (format == DataFormat::kIdx && options.stream) {
    EDL_ASSIGN_OR_RETURN(
        std::unique_ptr<StreamedIdxSource> s,
        StreamedIdxSource::Open(path, spec.idx, options.labels, options.index_dir));
    return std::unique_ptr<Source>(std::move(s));
  }
  if (format == DataFormat::kIdx) {
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<IdxSource> s,
                         IdxSource::Open(path, spec.idx, options.labels));
    return std::unique_ptr<Source>(std::move(s));
  }
  if (format == DataFormat::kCsv && !options.stream) {
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<ColumnSource> s,
                         CsvSource::Open(path, spec.csv, options.labels));
    return std::unique_ptr<Source>(std::move(s));
  }
  StreamOptions so;
  so.labels = options.labels;
  so.index_dir = options.index_dir;
  so.skip_corrupt_records = options.skip_corrupt_records;
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<StreamedSource> s,
                       StreamedSource::Open(path, spec, format, so));
  if (options.stream) return std::unique_ptr<Source>(std::move(s));
  // TFRecord loaded whole: every record decoded once into memory.
  ColumnBuffer records;
  EDL_RETURN_IF_ERROR(s->DecodeRange(0, s->num_records(), &records));
  return std::unique_ptr<Source>(
      std::make_unique<ColumnSource>(path, s->layout(), std::move(records)));
}

}  // namespace

Result<std::unique_ptr<Source>> OpenSource(const std::string& path, const InputSpec& spec,
                                           LabelPolicy labels) {
  OpenOptions options;
  options.labels = labels;
  return OpenSource(path, spec, options);
}

Result<std::unique_ptr<Source>> OpenSource(const std::string& path, const InputSpec& spec,
                                           const OpenOptions& options) {
  if (IsSqlUrl(path)) {
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<SqlSource> s, SqlSource::Open(path, spec, options));
    if (options.stream) return std::unique_ptr<Source>(std::move(s));
    // Loaded whole (local training, --data_in_memory): every row decoded once.
    ColumnBuffer records;
    EDL_RETURN_IF_ERROR(s->DecodeRange(0, s->num_records(), &records));
    return std::unique_ptr<Source>(
        std::make_unique<ColumnSource>(s->name(), s->layout(), std::move(records)));
  }
  // Image files: a folder of class folders, or a CSV listing of files.
  if (spec.format == DataFormat::kImages) {
    // Decoded once into memory, every file must decode: a file left out
    // would shift the records after it (the master counts the files).
    OpenOptions strict = options;
    if (options.images_in_memory) strict.skip_corrupt_records = false;
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<ImageSource> s,
                         ImageSource::Open(path, spec.image, strict));
    if (!options.images_in_memory) return std::unique_ptr<Source>(std::move(s));
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<ExamplesSource> decoded,
                         ReadIntoMemory(*s, 0, s->num_records()));
    return std::unique_ptr<Source>(std::move(decoded));
  }
  // The common case, and IDX images whose labels live beside them: one file.
  if (std::filesystem::is_regular_file(path)) return OpenFile(path, spec, options);
  EDL_ASSIGN_OR_RETURN(std::vector<std::string> files, ResolveDataPaths(path));
  if (files.size() == 1) return OpenFile(files[0], spec, options);
  std::vector<std::unique_ptr<Source>> parts;
  for (const std::string& f : files) {
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<Source> part, OpenFile(f, spec, options));
    parts.push_back(std::move(part));
  }
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ConcatSource> all,
                       ConcatSource::Create(path, std::move(parts)));
  return std::unique_ptr<Source>(std::move(all));
}

}  // namespace edl::data
