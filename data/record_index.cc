#include "data/record_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/file.h"
#include "base/logging.h"
#include "data/buffered_input.h"
#include "data/categorical.h"
#include "data/data_paths.h"
#include "data/idx_index.h"
#include "data/index_planner.h"
#include "data/tfrecord.h"

namespace edl::data {

namespace {

// Writes an index file atomically, creating its directory.
Status WriteIndexFile(const std::string& cache, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
  return WriteFileAtomically(cache, bytes);
}

constexpr size_t kChunk = 1 << 20;

Status StatFile(const std::string& path, uint64_t* size, int64_t* mtime_ns) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return IoError(path + ": cannot stat: " + std::strerror(errno));
  }
  *size = static_cast<uint64_t>(st.st_size);
  *mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return Status::Ok();
}

// Bytes of a ByteStream through a buffer: what the TFRecord indexer and the
// record reader parse.
// One TFRecord frame header at in.data(): its payload length, checked.
Result<uint64_t> TfLength(BufferedInput& in, uint64_t record) {
  uint64_t length = 0;
  if (!ReadTfRecordLength(in.data(), &length)) {
    return InvalidArgument(in.path() + ": record " + std::to_string(record) + " at byte " +
                           std::to_string(in.offset()) +
                           ": bad length checksum (not a TFRecord file, or corrupt)");
  }
  return length;
}

Status TruncatedTf(const BufferedInput& in, uint64_t record, uint64_t at, uint64_t length) {
  return InvalidArgument(in.path() + ": truncated: record " + std::to_string(record) + " at byte " +
                         std::to_string(at) + " declares " + std::to_string(length) +
                         " bytes, but the data ends at byte " +
                         std::to_string(in.offset() + in.available()));
}

Status IndexTfRecords(ByteStream& stream, RecordIndex* index, IndexPlanner& plan,
                      const std::function<void(uint64_t)>& progress) {
  BufferedInput in(stream);
  uint64_t records = 0;
  uint64_t next_report = 64ull << 20;
  while (true) {
    EDL_ASSIGN_OR_RETURN(bool more, in.Need(kTfRecordHeader));
    if (!more) {
      if (in.available() > 0) {
        return InvalidArgument(in.path() + ": truncated: " + std::to_string(in.available()) +
                               " bytes at byte " + std::to_string(in.offset()) +
                               " are less than a record header");
      }
      break;
    }
    const uint64_t at = in.offset();
    EDL_ASSIGN_OR_RETURN(uint64_t length, TfLength(in, records));
    if (length > kMaxTfRecordLength) {
      return InvalidArgument(in.path() + ": record " + std::to_string(records) + " at byte " +
                             std::to_string(at) + " declares " + std::to_string(length) +
                             " bytes, more than a TFRecord may hold here (2^40)");
    }
    plan.OnRecord(records, at);
    in.Advance(kTfRecordHeader);
    EDL_ASSIGN_OR_RETURN(bool whole, in.Skip(length + 4));
    if (!whole) return TruncatedTf(in, records, at, length);
    ++records;
    if (progress && in.offset() >= next_report) {
      progress(in.offset());
      next_report = in.offset() + (64ull << 20);
    }
  }
  index->num_records = records;
  index->data_size = in.offset();
  return Status::Ok();
}

// Quote-aware CSV rows, as data/csv_reader.h reads them: a '"' opens a
// quoted field only at the start of a field (elsewhere it is a literal
// character); inside, '""' is a literal quote and a lone '"' closes it; a
// '\n' outside quotes ends a row. Empty rows ("" or "\r" before a '\n')
// are not records; a last row without '\n' is one if it is not empty.
Status IndexCsvRows(ByteStream& stream, char delimiter, RecordIndex* index, IndexPlanner& plan,
                    const std::function<void(uint64_t)>& progress) {
  std::string buf(kChunk, '\0');
  uint64_t base = 0;  // offset of buf[0]
  uint64_t row_start = 0;
  uint64_t row_len = 0;
  char last = '\n';  // last byte of the current row so far
  bool quoted = false;
  bool closing = false;  // quoted, and the chunk ended on a '"'
  uint64_t records = 0;
  auto end_row = [&](uint64_t next_start, bool newline) {
    if (row_len > 1 || (row_len == 1 && (last != '\r' || !newline))) {
      plan.OnRecord(records, row_start);
      ++records;
    }
    row_start = next_start;
    row_len = 0;
  };
  uint64_t next_report = 64ull << 20;
  while (true) {
    EDL_ASSIGN_OR_RETURN(size_t n, stream.Read(buf.data(), buf.size()));
    if (n == 0) break;
    const char* data = buf.data();
    const char* p = data;
    const char* end = data + n;
    if (closing) {  // the '"' that ended the last chunk: "" or a close
      closing = false;
      if (*p == '"') {
        ++row_len;
        ++p;
      } else {
        quoted = false;
      }
    }
    while (p < end) {
      if (quoted) {
        const char* q = static_cast<const char*>(std::memchr(p, '"', end - p));
        if (!q) {
          row_len += end - p;
          last = end[-1];
          p = end;
          break;
        }
        row_len += q - p + 1;
        last = '"';
        if (q + 1 == end) {
          closing = true;
          p = end;
          break;
        }
        if (q[1] == '"') {
          ++row_len;
          p = q + 2;
        } else {
          quoted = false;
          p = q + 1;
        }
        continue;
      }
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      const char* stop = nl ? nl : end;
      const char* q = static_cast<const char*>(std::memchr(p, '"', stop - p));
      if (q) {
        const char before = q > p ? q[-1] : (row_len == 0 ? delimiter : last);
        quoted = before == delimiter;  // else a literal '"' inside a field
        row_len += q - p + 1;
        last = '"';
        p = q + 1;
        continue;
      }
      if (stop > p) {
        row_len += stop - p;
        last = stop[-1];
      }
      if (!nl) {
        p = end;
        break;
      }
      end_row(base + static_cast<uint64_t>(nl - data) + 1, true);
      p = nl + 1;
    }
    base += n;
    if (progress && base >= next_report) {
      progress(base);
      next_report = base + (64ull << 20);
    }
  }
  if (closing) quoted = false;  // the file ends on the closing quote
  if (quoted) {
    return InvalidArgument(stream.path() + ": the row starting at byte " +
                           std::to_string(row_start) +
                           " opens a quoted field that is never closed");
  }
  end_row(base, false);
  index->num_records = records;
  index->data_size = base;
  return Status::Ok();
}

}  // namespace

const char* RecordFormatName(RecordFormat f) {
  switch (f) {
    case RecordFormat::kTfRecord: return "TFRecord";
    case RecordFormat::kIdx: return "IDX";
    case RecordFormat::kCsvRows: break;
  }
  return "CSV";
}

Result<RecordIndex> BuildRecordIndex(const std::string& path, RecordFormat format,
                                     const IndexOptions& options,
                                     const std::function<void(uint64_t)>& progress) {
  if (options.every == 0) return InvalidArgument("record index: every must be positive");
  RecordIndex index;
  index.path = path;
  index.format = format;
  index.every = options.every;
  index.delimiter = options.delimiter;
  EDL_RETURN_IF_ERROR(StatFile(path, &index.file_size, &index.file_mtime_ns));
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, ByteStream::Open(path));
  index.gzip = stream->gzip();
  IndexPlanner plan(&index, *stream, options);
  if (format == RecordFormat::kTfRecord) {
    EDL_RETURN_IF_ERROR(IndexTfRecords(*stream, &index, plan, progress));
  } else if (format == RecordFormat::kIdx) {
    EDL_RETURN_IF_ERROR(IndexIdxRecords(*stream, &index, plan, progress));
  } else {
    EDL_RETURN_IF_ERROR(IndexCsvRows(*stream, options.delimiter, &index, plan, progress));
  }
  plan.Finish();
  return index;
}

Status CheckIndexFresh(const RecordIndex& index) {
  uint64_t size = 0;
  int64_t mtime = 0;
  EDL_RETURN_IF_ERROR(StatFile(index.path, &size, &mtime));
  if (size != index.file_size || mtime != index.file_mtime_ns) {
    return FailedPrecondition(index.path + ": changed since it was indexed (" +
                              std::to_string(index.file_size) + " bytes then, " +
                              std::to_string(size) + " now, or a newer modification time)");
  }
  return Status::Ok();
}

std::string IndexCachePath(const std::string& path, const std::string& index_dir) {
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  return IndexCachePath(path, index_dir, ::access(dir.c_str(), W_OK) == 0);
}

std::string IndexCachePath(const std::string& path, const std::string& index_dir,
                           bool data_dir_writable) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string name = p.filename().string();
  if (index_dir.empty() || data_dir_writable) {
    return (dir / ("." + name + ".edlidx")).string();
  }
  std::error_code ec;
  const fs::path absolute = fs::weakly_canonical(fs::absolute(p, ec), ec);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(Fnv1a64(ec ? path : absolute.string())));
  return (fs::path(index_dir) / (std::string(hash) + "-" + name + ".edlidx")).string();
}

std::optional<RecordIndex> LoadFreshRecordIndex(const std::string& path, RecordFormat format,
                                                const std::string& index_dir,
                                                const IndexOptions& options) {
  const std::string cache = IndexCachePath(path, index_dir);
  auto bytes = ReadFile(cache);
  if (!bytes.ok()) return std::nullopt;
  auto index = ParseRecordIndex(*bytes, cache, /*lazy_windows=*/true);
  if (!index.ok()) {
    EDL_LOG(WARNING) << index.status().message() << "; indexing " << path << " again";
    return std::nullopt;
  }
  if (index->format != format ||
      (format == RecordFormat::kCsvRows && index->delimiter != options.delimiter)) {
    return std::nullopt;
  }
  index->path = path;
  if (!CheckIndexFresh(*index).ok()) {
    EDL_LOG(INFO) << path << ": changed since it was indexed; indexing it again";
    return std::nullopt;
  }
  return std::move(*index);
}

Result<RecordIndex> LoadOrBuildRecordIndex(const std::string& path, RecordFormat format,
                                           const std::string& index_dir,
                                           const IndexOptions& options, bool* built) {
  if (std::optional<RecordIndex> fresh = LoadFreshRecordIndex(path, format, index_dir, options)) {
    if (built) *built = false;
    return std::move(*fresh);
  }
  const std::string cache = IndexCachePath(path, index_dir);
  EDL_ASSIGN_OR_RETURN(RecordIndex index, BuildRecordIndex(path, format, options));
  if (built) *built = true;
  const std::string bytes = SerializeRecordIndex(index);
  Status saved = WriteIndexFile(cache, bytes);
  if (!saved.ok()) {
    // Kept whole in memory: 32 KiB per gzip access point.
    EDL_LOG(WARNING) << "cannot cache the index of " << path << ": " << saved.message();
    return index;
  }
  // As if loaded: the windows stay in the file just written.
  auto lazy = ParseRecordIndex(bytes, cache, /*lazy_windows=*/true);
  if (!lazy.ok()) return index;
  lazy->path = path;
  return std::move(*lazy);
}

Status SaveRecordIndex(const RecordIndex& index, const std::string& index_dir) {
  return WriteIndexFile(IndexCachePath(index.path, index_dir), SerializeRecordIndex(index));
}

Result<RecordFormat> RecordFormatFromName(const std::string& path) {
  switch (FileKindFromName(path)) {
    case FileKind::kTfRecord: return RecordFormat::kTfRecord;
    case FileKind::kCsv:
    case FileKind::kTsv: return RecordFormat::kCsvRows;
    default: break;
  }
  return InvalidArgument(path +
                         ": cannot tell its format from its name (.csv, .tsv, .tfrecord, "
                         "optionally .gz); name it so or pass --format");
}

}  // namespace edl::data
