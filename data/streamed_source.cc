#include "data/streamed_source.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "base/logging.h"
#include "data/csv_reader.h"
#include "data/csv_row_decoder.h"
#include "data/csv_source.h"
#include "data/example_decoder.h"
#include "data/record_reader.h"

namespace edl::data {

// One record's bytes -> its values, for either format.
class StreamedSource::Decoder {
 public:
  virtual ~Decoder() = default;
  virtual const ColumnLayout& layout() const = 0;
  virtual Status Decode(const std::string& record, ColumnBuffer* out) const = 0;
};

namespace {

class CsvDecoder : public StreamedSource::Decoder {
 public:
  CsvDecoder(std::unique_ptr<CsvRowDecoder> rows, char delimiter, std::string path)
      : rows_(std::move(rows)), delimiter_(delimiter), path_(std::move(path)) {}
  const ColumnLayout& layout() const override { return rows_->layout(); }
  Status Decode(const std::string& record, ColumnBuffer* out) const override {
    if (std::memchr(record.data(), '"', record.size()) == nullptr) {
      // No quotes (most rows): the fields are the pieces between
      // delimiters, viewed in place.
      thread_local std::vector<std::string_view> fields;
      fields.clear();
      std::string_view row(record);
      if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
      if (!row.empty()) {
        size_t start = 0;
        while (true) {
          const size_t end = row.find(delimiter_, start);
          fields.push_back(row.substr(start, end == std::string_view::npos ? end : end - start));
          if (end == std::string_view::npos) break;
          start = end + 1;
        }
      }
      return rows_->Decode(fields, out);
    }
    CsvReader reader(record, delimiter_, path_);
    EDL_ASSIGN_OR_RETURN(bool got, reader.Next());
    static const std::vector<std::string> kNoFields;
    return rows_->Decode(got ? reader.fields() : kNoFields, out);
  }

 private:
  std::unique_ptr<CsvRowDecoder> rows_;
  char delimiter_;
  std::string path_;
};

class TfExampleDecoder : public StreamedSource::Decoder {
 public:
  explicit TfExampleDecoder(std::unique_ptr<ExampleDecoder> examples)
      : examples_(std::move(examples)) {}
  const ColumnLayout& layout() const override { return examples_->layout(); }
  Status Decode(const std::string& record, ColumnBuffer* out) const override {
    return examples_->Decode(record, out);
  }

 private:
  std::unique_ptr<ExampleDecoder> examples_;
};

// "x.csv: row 18 (byte 1234)" / "x.tfrecord: record 17 (byte 1234)".
std::string Where(const RecordIndex& index, uint64_t record, uint64_t offset) {
  const bool csv = index.format == RecordFormat::kCsvRows;
  return index.path +
         (csv ? ": row " + std::to_string(record + 1) : ": record " + std::to_string(record)) +
         " (byte " + std::to_string(offset) + ")";
}

// The CSV fields of `index`'s record `n`, or nullopt past the end.
Result<std::optional<std::vector<std::string>>> CsvRow(const RecordIndex& index, uint64_t n,
                                                       std::string* where) {
  if (n >= index.num_records) return std::optional<std::vector<std::string>>();
  EDL_ASSIGN_OR_RETURN(auto reader, RecordReader::Open(index, n));
  *where = Where(index, n, reader->offset());
  std::string row;
  EDL_ASSIGN_OR_RETURN(bool got, reader->Next(&row));
  CsvReader fields(row, index.delimiter, index.path);
  EDL_ASSIGN_OR_RETURN(bool any, fields.Next());
  if (!got || !any) return std::optional<std::vector<std::string>>(std::vector<std::string>());
  return std::optional<std::vector<std::string>>(fields.fields());
}

}  // namespace

StreamedSource::~StreamedSource() = default;

Result<std::unique_ptr<StreamedSource>> StreamedSource::Open(const std::string& path,
                                                             const InputSpec& spec,
                                                             DataFormat format,
                                                             const StreamOptions& options) {
  EDL_CHECK(format == DataFormat::kCsv || format == DataFormat::kTfRecord);
  const bool csv = format == DataFormat::kCsv;
  IndexOptions io;
  io.delimiter = spec.csv.delimiter;
  std::unique_ptr<StreamedSource> s(new StreamedSource());
  s->name_ = path;
  EDL_ASSIGN_OR_RETURN(s->index_, LoadOrBuildRecordIndex(
                                      path, csv ? RecordFormat::kCsvRows : RecordFormat::kTfRecord,
                                      options.index_dir, io));
  const int64_t total = static_cast<int64_t>(s->index_.num_records);
  if (csv) {
    const CsvSpec& c = spec.csv;
    s->skip_ = std::min<int64_t>(total, c.skip_rows);
    std::string where;
    EDL_ASSIGN_OR_RETURN(auto first, CsvRow(s->index_, s->skip_, &where));
    EDL_ASSIGN_OR_RETURN(std::vector<std::string> columns,
                         CsvColumnNames(path, c, first ? &*first : nullptr, where));
    if (c.header && first) ++s->skip_;
    EDL_ASSIGN_OR_RETURN(auto rows, CsvRowDecoder::Create(path, columns, c, options.labels));
    s->decoder_ = std::make_unique<CsvDecoder>(std::move(rows), c.delimiter, path);
  } else {
    std::optional<ExampleFeatures> first;
    if (total > 0) {
      EDL_ASSIGN_OR_RETURN(auto reader, RecordReader::Open(s->index_, 0));
      std::string payload;
      EDL_ASSIGN_OR_RETURN(bool got, reader->Next(&payload));
      if (got) {
        EDL_ASSIGN_OR_RETURN(first, ParseExample(payload, Where(s->index_, 0, 0)));
      }
    }
    EDL_ASSIGN_OR_RETURN(
        auto examples,
        ExampleDecoder::Create(path, spec.csv, options.labels, first ? &*first : nullptr,
                               spec.has_image() ? &spec.image : nullptr));
    s->decoder_ = std::make_unique<TfExampleDecoder>(std::move(examples));
  }
  s->num_records_ = total - s->skip_;
  s->skip_corrupt_ = options.skip_corrupt_records;
  return s;
}

bool StreamedSource::has_labels() const { return decoder_->layout().has_labels; }
const std::vector<InputInfo>& StreamedSource::inputs() const { return decoder_->layout().inputs; }
const ColumnLayout& StreamedSource::layout() const { return decoder_->layout(); }

constexpr int64_t kLoggedSkips = 20;  // per file

// Decodes records in order from one reader opened at the first.
class StreamedSource::Cursor : public RecordCursor {
 public:
  Cursor(const StreamedSource& source, std::unique_ptr<RecordReader> reader, int64_t next,
         int64_t end)
      : source_(source), reader_(std::move(reader)), next_(next), end_(end) {}

  // Appends the next min(n, left) records to `out`.
  Status Decode(int64_t n, ColumnBuffer* out) {
    const RecordIndex& index = source_.index_;
    const int64_t stop = std::min(end_, next_ + std::max<int64_t>(n, 0));
    for (; next_ < stop; ++next_) {
      const uint64_t offset = reader_->offset();
      const uint64_t r = reader_->record();
      Result<bool> got = reader_->Next(&record_);
      if (got.ok() && !*got) {
        got = InvalidArgument(index.path + ": ends before record " + std::to_string(r) +
                              " (changed since it was indexed?)");
      }
      if (!got.ok()) {
        if (source_.skip_corrupt_ && reader_->passed_bad_record()) {
          Skipped(got.status());
          continue;
        }
        return got.status();
      }
      Status s = source_.decoder_->Decode(record_, out);
      if (!s.ok()) {
        s = s.WithPrefix(Where(index, r, offset));
        if (!source_.skip_corrupt_) return s;
        Skipped(s);
      }
    }
    return Status::Ok();
  }

  void Skipped(const Status& why) {
    const int64_t n = ++source_.skipped_;
    // The first few are logged; every one is counted.
    if (n <= kLoggedSkips) {
      EDL_LOG(WARNING) << "skipping a corrupt record (--skip_corrupt_records): " << why.message()
                       << (n == kLoggedSkips ? " (further ones are counted, not logged)" : "");
    }
  }

  Result<Examples> Next(int64_t n) override {
    ColumnBuffer records;
    EDL_RETURN_IF_ERROR(Decode(n, &records));
    return records.Slice(source_.layout(), 0, records.size);
  }

 private:
  const StreamedSource& source_;
  std::unique_ptr<RecordReader> reader_;
  int64_t next_;
  int64_t end_;
  std::string record_;
};

Result<std::unique_ptr<StreamedSource::Cursor>> StreamedSource::OpenStreamCursor(
    int64_t begin, int64_t end) const {
  EDL_RETURN_IF_ERROR(CheckRange(begin, end));
  std::unique_ptr<RecordReader> reader;
  if (begin < end) {
    EDL_ASSIGN_OR_RETURN(reader, RecordReader::Open(index_, static_cast<uint64_t>(skip_ + begin)));
  }
  return std::make_unique<Cursor>(*this, std::move(reader), begin, end);
}

Result<std::unique_ptr<RecordCursor>> StreamedSource::OpenCursor(int64_t begin, int64_t end) const {
  EDL_ASSIGN_OR_RETURN(auto cursor, OpenStreamCursor(begin, end));
  return std::unique_ptr<RecordCursor>(std::move(cursor));
}

Status StreamedSource::DecodeRange(int64_t begin, int64_t end, ColumnBuffer* out) const {
  EDL_ASSIGN_OR_RETURN(auto cursor, OpenStreamCursor(begin, end));
  return cursor->Decode(end - begin, out);
}

Result<Examples> StreamedSource::Read(int64_t begin, int64_t end) const {
  ColumnBuffer records;
  EDL_RETURN_IF_ERROR(DecodeRange(begin, end, &records));
  return records.Slice(layout(), 0, records.size);
}

Result<Examples> StreamedSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  if (indices.empty()) return ColumnBuffer().Slice(layout(), 0, 0);
  const auto [lo, hi] = std::minmax_element(indices.begin(), indices.end());
  const int64_t first = *lo;
  ColumnBuffer records;
  EDL_RETURN_IF_ERROR(DecodeRange(first, *hi + 1, &records));
  if (records.size != *hi + 1 - first) {
    return InvalidArgument(name_ + ": records were skipped in [" + std::to_string(first) + ", " +
                           std::to_string(*hi + 1) +
                           ") (--skip_corrupt_records): read the range and gather from it");
  }
  std::vector<int64_t> local(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) local[i] = indices[i] - first;
  return records.Gather(layout(), local.data(), static_cast<int64_t>(local.size()));
}

}  // namespace edl::data
