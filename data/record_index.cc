#include "data/record_index.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/file.h"
#include "base/logging.h"
#include "data/categorical.h"
#include "data/crc32c.h"

namespace edl::data {
namespace {

constexpr char kMagic[8] = {'E', 'D', 'L', 'R', 'I', 'D', 'X', '1'};
constexpr uint32_t kVersion = 1;
constexpr size_t kChunk = 1 << 20;
constexpr size_t kTfHeader = 12;  // uint64 length + masked CRC of it
// Longer records than this are refused before any arithmetic on them.
constexpr uint64_t kMaxTfLength = 1ull << 40;

uint64_t Le64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t Le32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

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
class Input {
 public:
  explicit Input(ByteStream& s) : s_(s), buf_(kChunk, '\0'), offset_(s.offset()) {}
  // At least n unread bytes; false when the data ends first (then
  // available() says how many there were).
  Result<bool> Need(size_t n) {
    while (end_ - pos_ < n) {
      if (eof_) return false;
      if (pos_ > 0) {
        std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
        end_ -= pos_;
        pos_ = 0;
      }
      if (buf_.size() < n) buf_.resize(std::max(n, buf_.size() * 2));
      EDL_ASSIGN_OR_RETURN(size_t got, s_.Read(buf_.data() + end_, buf_.size() - end_));
      if (got == 0) eof_ = true;
      end_ += got;
    }
    return true;
  }
  // Skips n bytes; false when the data ends first.
  Result<bool> Skip(uint64_t n) {
    while (n > 0) {
      if (pos_ == end_) {
        EDL_ASSIGN_OR_RETURN(bool more, Need(1));
        if (!more) return false;
      }
      const size_t step = static_cast<size_t>(std::min<uint64_t>(n, end_ - pos_));
      Advance(step);
      n -= step;
    }
    return true;
  }
  const char* data() const { return buf_.data() + pos_; }
  size_t available() const { return end_ - pos_; }
  void Advance(size_t n) {
    pos_ += n;
    offset_ += n;
  }
  uint64_t offset() const { return offset_; }  // uncompressed offset of data()
  bool eof() const { return eof_; }
  const std::string& path() const { return s_.path(); }

 private:
  ByteStream& s_;
  std::string buf_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t offset_ = 0;
};

// One TFRecord frame header at in.data(): its payload length, checked.
Result<uint64_t> TfLength(Input& in, uint64_t record) {
  const uint64_t length = Le64(in.data());
  if (MaskCrc(Crc32c(in.data(), 8)) != Le32(in.data() + 8)) {
    return InvalidArgument(in.path() + ": record " + std::to_string(record) + " at byte " +
                           std::to_string(in.offset()) +
                           ": bad length checksum (not a TFRecord file, or corrupt)");
  }
  return length;
}

Status TruncatedTf(const Input& in, uint64_t record, uint64_t at, uint64_t length) {
  return InvalidArgument(in.path() + ": truncated: record " + std::to_string(record) +
                         " at byte " + std::to_string(at) + " declares " +
                         std::to_string(length) + " bytes, but the data ends at byte " +
                         std::to_string(in.offset() + in.available()));
}

Status IndexTfRecords(ByteStream& stream, RecordIndex* index,
                      const std::function<void(uint64_t)>& progress) {
  Input in(stream);
  uint64_t records = 0;
  uint64_t next_report = 64ull << 20;
  while (true) {
    EDL_ASSIGN_OR_RETURN(bool more, in.Need(kTfHeader));
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
    if (length > kMaxTfLength) {
      return InvalidArgument(in.path() + ": record " + std::to_string(records) + " at byte " +
                             std::to_string(at) + " declares " + std::to_string(length) +
                             " bytes, more than a TFRecord may hold here (2^40)");
    }
    if (records % index->every == 0) index->offsets.push_back(at);
    in.Advance(kTfHeader);
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
Status IndexCsvRows(ByteStream& stream, char delimiter, RecordIndex* index,
                    const std::function<void(uint64_t)>& progress) {
  std::string buf(kChunk, '\0');
  uint64_t base = 0;          // offset of buf[0]
  uint64_t row_start = 0;
  uint64_t row_len = 0;
  char last = '\n';           // last byte of the current row so far
  bool quoted = false;
  bool closing = false;       // quoted, and the chunk ended on a '"'
  uint64_t records = 0;
  const uint64_t every = index->every;
  auto end_row = [&](uint64_t next_start, bool newline) {
    if (row_len > 1 || (row_len == 1 && (last != '\r' || !newline))) {
      if (records % every == 0) index->offsets.push_back(row_start);
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

// ---- Serialization --------------------------------------------------------

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), 4); }
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), 8); }
  void Bytes(const std::string& s) {
    U64(s.size());
    out_ += s;
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const std::string& bytes, std::string where) : b_(bytes), where_(std::move(where)) {}
  bool Has(size_t n) const { return b_.size() - pos_ >= n; }
  Result<uint8_t> U8() {
    if (!Has(1)) return Truncated();
    return static_cast<uint8_t>(b_[pos_++]);
  }
  Result<uint32_t> U32() {
    if (!Has(4)) return Truncated();
    uint32_t v = Le32(b_.data() + pos_);
    pos_ += 4;
    return v;
  }
  Result<uint64_t> U64() {
    if (!Has(8)) return Truncated();
    uint64_t v = Le64(b_.data() + pos_);
    pos_ += 8;
    return v;
  }
  Result<std::string> Bytes() {
    EDL_ASSIGN_OR_RETURN(uint64_t n, U64());
    if (!Has(n)) return Truncated();
    std::string s = b_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  Status Truncated() const { return InvalidArgument(where_ + ": truncated record index"); }

 private:
  const std::string& b_;
  std::string where_;
  size_t pos_ = 0;
};

std::string Deflate(const std::string& in) {
  uLongf size = compressBound(in.size());
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size,
            reinterpret_cast<const Bytef*>(in.data()), in.size(), 1);
  out.resize(size);
  return out;
}


}  // namespace

const char* RecordFormatName(RecordFormat f) {
  return f == RecordFormat::kTfRecord ? "TFRecord" : "CSV";
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
  if (index.gzip) {
    stream->RecordAccessPoints(options.access_spacing, [&](GzipAccessPoint p) {
      index.access.push_back(std::move(p));
    });
  }
  if (format == RecordFormat::kTfRecord) {
    EDL_RETURN_IF_ERROR(IndexTfRecords(*stream, &index, progress));
  } else {
    EDL_RETURN_IF_ERROR(IndexCsvRows(*stream, options.delimiter, &index, progress));
  }
  return index;
}

std::string SerializeRecordIndex(const RecordIndex& index) {
  Writer w;
  w.out().append(kMagic, sizeof kMagic);
  w.U32(kVersion);
  w.U8(static_cast<uint8_t>(index.format));
  w.U8(index.gzip ? 1 : 0);
  w.U8(static_cast<uint8_t>(index.delimiter));
  w.U64(index.file_size);
  w.U64(static_cast<uint64_t>(index.file_mtime_ns));
  w.U64(index.num_records);
  w.U64(index.data_size);
  w.U64(index.every);
  w.U64(index.offsets.size());
  for (uint64_t o : index.offsets) w.U64(o);
  w.U64(index.access.size());
  for (const GzipAccessPoint& p : index.access) {
    w.U64(p.in_offset);
    w.U64(p.out_offset);
    w.U8(static_cast<uint8_t>(p.bits));
    w.U64(p.window.size());
    w.Bytes(Deflate(p.window));
  }
  w.U32(Crc32c(w.out().data(), w.out().size()));
  return std::move(w.out());
}

Result<RecordIndex> ParseRecordIndex(const std::string& bytes, const std::string& where) {
  if (bytes.size() < sizeof kMagic + 4 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return InvalidArgument(where + ": not an edl record index");
  }
  if (Crc32c(bytes.data(), bytes.size() - 4) != Le32(bytes.data() + bytes.size() - 4)) {
    return InvalidArgument(where + ": record index checksum mismatch");
  }
  const std::string body = bytes.substr(sizeof kMagic, bytes.size() - sizeof kMagic - 4);
  Reader r(body, where);
  EDL_ASSIGN_OR_RETURN(uint32_t version, r.U32());
  if (version != kVersion) {
    return InvalidArgument(where + ": record index version " + std::to_string(version) +
                           ", this build reads " + std::to_string(kVersion));
  }
  RecordIndex index;
  EDL_ASSIGN_OR_RETURN(uint8_t format, r.U8());
  if (format != 1 && format != 2) return InvalidArgument(where + ": unknown record format");
  index.format = static_cast<RecordFormat>(format);
  EDL_ASSIGN_OR_RETURN(uint8_t gzip, r.U8());
  index.gzip = gzip != 0;
  EDL_ASSIGN_OR_RETURN(uint8_t delimiter, r.U8());
  index.delimiter = static_cast<char>(delimiter);
  EDL_ASSIGN_OR_RETURN(index.file_size, r.U64());
  EDL_ASSIGN_OR_RETURN(uint64_t mtime, r.U64());
  index.file_mtime_ns = static_cast<int64_t>(mtime);
  EDL_ASSIGN_OR_RETURN(index.num_records, r.U64());
  EDL_ASSIGN_OR_RETURN(index.data_size, r.U64());
  EDL_ASSIGN_OR_RETURN(index.every, r.U64());
  EDL_ASSIGN_OR_RETURN(uint64_t offsets, r.U64());
  if (index.every == 0 || offsets > body.size() / 8 || !r.Has(offsets * 8) ||
      offsets != index.num_records / index.every + (index.num_records % index.every != 0)) {
    return InvalidArgument(where + ": inconsistent record index");
  }
  index.offsets.resize(offsets);
  for (auto& o : index.offsets) {
    EDL_ASSIGN_OR_RETURN(o, r.U64());
  }
  EDL_ASSIGN_OR_RETURN(uint64_t points, r.U64());
  if (points > body.size() / 25 || !r.Has(points * 25)) return r.Truncated();
  index.access.resize(points);
  for (GzipAccessPoint& p : index.access) {
    EDL_ASSIGN_OR_RETURN(p.in_offset, r.U64());
    EDL_ASSIGN_OR_RETURN(p.out_offset, r.U64());
    EDL_ASSIGN_OR_RETURN(uint8_t bits, r.U8());
    EDL_ASSIGN_OR_RETURN(uint64_t window, r.U64());
    EDL_ASSIGN_OR_RETURN(std::string packed, r.Bytes());
    if (bits > 7 || window > 32768) return InvalidArgument(where + ": bad access point");
    p.bits = bits;
    p.window.resize(window);
    uLongf size = window;
    if (uncompress(reinterpret_cast<Bytef*>(p.window.data()), &size,
                   reinterpret_cast<const Bytef*>(packed.data()), packed.size()) != Z_OK ||
        size != window) {
      return InvalidArgument(where + ": bad access point window");
    }
  }
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

Result<RecordIndex> LoadOrBuildRecordIndex(const std::string& path, RecordFormat format,
                                           const std::string& index_dir,
                                           const IndexOptions& options, bool* built) {
  const std::string cache = IndexCachePath(path, index_dir);
  if (auto bytes = ReadFile(cache); bytes.ok()) {
    auto index = ParseRecordIndex(*bytes, cache);
    if (index.ok() && index->format == format &&
        (format != RecordFormat::kCsvRows || index->delimiter == options.delimiter)) {
      index->path = path;
      if (CheckIndexFresh(*index).ok()) {
        if (built) *built = false;
        return index;
      }
      EDL_LOG(INFO) << path << ": changed since it was indexed; indexing it again";
    } else if (!index.ok()) {
      EDL_LOG(WARNING) << index.status().message() << "; indexing " << path << " again";
    }
  }
  EDL_ASSIGN_OR_RETURN(RecordIndex index, BuildRecordIndex(path, format, options));
  if (built) *built = true;
  Status saved = SaveRecordIndex(index, index_dir);
  if (!saved.ok()) {
    EDL_LOG(WARNING) << "cannot cache the index of " << path << ": " << saved.message();
  }
  return index;
}

Status SaveRecordIndex(const RecordIndex& index, const std::string& index_dir) {
  const std::string cache = IndexCachePath(index.path, index_dir);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
  return WriteFileAtomically(cache, SerializeRecordIndex(index));
}

Result<RecordFormat> RecordFormatFromName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) {
    name.resize(name.size() - 3);
  }
  auto ends = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
  };
  if (ends(".tfrecord") || ends(".tfrecords") || ends(".tfr")) return RecordFormat::kTfRecord;
  if (ends(".csv") || ends(".tsv") || ends(".txt")) return RecordFormat::kCsvRows;
  return InvalidArgument(path + ": cannot tell its format from its name (.csv, .tsv, .tfrecord, "
                         "optionally .gz); name it so or pass --format");
}

// ---- RecordReader -----------------------------------------------------------

RecordReader::RecordReader(const RecordIndex& index, std::unique_ptr<ByteStream> stream)
    : index_(index), stream_(std::move(stream)), buf_(kChunk, '\0'),
      offset_(stream_->offset()) {}

Result<std::unique_ptr<RecordReader>> RecordReader::Open(const RecordIndex& index,
                                                         uint64_t first) {
  if (first > index.num_records) {
    return InvalidArgument(index.path + ": record " + std::to_string(first) + " of " +
                           std::to_string(index.num_records));
  }
  const uint64_t point = first / index.every;
  const uint64_t at = point < index.offsets.size() ? index.offsets[point] : index.data_size;
  GzipAccessPoint start;
  if (index.gzip) {
    auto it = std::upper_bound(index.access.begin(), index.access.end(), at,
                               [](uint64_t v, const GzipAccessPoint& p) { return v < p.out_offset; });
    if (it != index.access.begin()) start = *std::prev(it);
  } else {
    start.out_offset = at;
  }
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, ByteStream::OpenAt(index.path, start));
  std::unique_ptr<RecordReader> reader(new RecordReader(index, std::move(stream)));
  // Decompressed from the access point to the index point, then records.
  reader->record_ = point * index.every;
  while (reader->offset_ < at) {
    EDL_ASSIGN_OR_RETURN(bool more, reader->Need(1));
    if (!more) {
      return InvalidArgument(index.path + ": ends at byte " + std::to_string(reader->offset_) +
                             " before indexed byte " + std::to_string(at) +
                             " (changed since it was indexed?)");
    }
    const size_t step = static_cast<size_t>(std::min<uint64_t>(at - reader->offset_,
                                                               reader->end_ - reader->pos_));
    reader->pos_ += step;
    reader->offset_ += step;
  }
  EDL_RETURN_IF_ERROR(reader->Skip(first - reader->record_));
  return reader;
}

Result<bool> RecordReader::Need(size_t n) {
  while (end_ - pos_ < n) {
    if (eof_) return false;
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (buf_.size() - end_ < kChunk / 4) buf_.resize(std::max(buf_.size() * 2, end_ + n));
    EDL_ASSIGN_OR_RETURN(size_t got, stream_->Read(buf_.data() + end_, buf_.size() - end_));
    if (got == 0) eof_ = true;
    end_ += got;
  }
  return true;
}

Status RecordReader::Skip(uint64_t records) {
  std::string scratch;
  for (uint64_t i = 0; i < records; ++i) {
    EDL_ASSIGN_OR_RETURN(bool got, Next(&scratch));
    if (!got) {
      return InvalidArgument(index_.path + ": ends after record " + std::to_string(record_) +
                             ", the index counted " + std::to_string(index_.num_records) +
                             " (changed since it was indexed?)");
    }
  }
  return Status::Ok();
}

Result<bool> RecordReader::Next(std::string* record) {
  Result<bool> got = index_.format == RecordFormat::kTfRecord ? NextTfRecord(record)
                                                              : NextCsvRow(record);
  if (got.ok() && !*got && record_ < index_.num_records) {
    return InvalidArgument(index_.path + ": ends after record " + std::to_string(record_) +
                           " at byte " + std::to_string(offset_) + ", the index counted " +
                           std::to_string(index_.num_records) +
                           " records (changed since it was indexed?)");
  }
  return got;
}

Result<bool> RecordReader::NextCsvRow(std::string* row) {
  const char delimiter = index_.delimiter;
  while (true) {
    // Scan for the row's end with the indexer's rules, pulling more bytes
    // as needed (offsets from pos_: Need may move the buffer).
    size_t i = 0;
    bool quoted = false;
    bool newline = false;
    while (true) {
      if (pos_ + i == end_) {
        EDL_ASSIGN_OR_RETURN(bool more, Need(i + 1));
        if (!more) break;
      }
      const char* b = buf_.data() + pos_;
      const size_t avail = end_ - pos_;
      if (!quoted) {
        const char* nl = static_cast<const char*>(std::memchr(b + i, '\n', avail - i));
        const char* stop = nl ? nl : b + avail;
        const char* q = static_cast<const char*>(std::memchr(b + i, '"', stop - (b + i)));
        if (q) {
          const size_t k = static_cast<size_t>(q - b);
          quoted = k == 0 || b[k - 1] == delimiter;  // else a literal '"'
          i = k + 1;
          continue;
        }
        if (nl) {
          i = static_cast<size_t>(nl - b);
          newline = true;
          break;
        }
        i = avail;
        continue;
      }
      const char* q = static_cast<const char*>(std::memchr(b + i, '"', avail - i));
      if (!q) {
        i = avail;
        continue;
      }
      const size_t k = static_cast<size_t>(q - b);
      EDL_ASSIGN_OR_RETURN(bool next, Need(k + 2));  // may move the buffer
      if (next && buf_[pos_ + k + 1] == '"') {
        i = k + 2;  // "" inside quotes
      } else {
        quoted = false;
        i = k + 1;
      }
    }
    if (quoted) {
      return InvalidArgument(index_.path + ": the row starting at byte " + std::to_string(offset_) +
                             " opens a quoted field that is never closed");
    }
    size_t len = i;
    if (newline && len > 0 && buf_[pos_ + len - 1] == '\r') --len;
    const size_t consumed = i + (newline ? 1 : 0);
    if (consumed == 0) return false;  // the end of the data
    const bool empty = len == 0;
    if (!empty) row->assign(buf_.data() + pos_, len);
    pos_ += consumed;
    offset_ += consumed;
    if (!empty) {
      ++record_;
      return true;
    }
  }
}

Result<bool> RecordReader::NextTfRecord(std::string* payload) {
  EDL_ASSIGN_OR_RETURN(bool more, Need(kTfHeader));
  if (!more) {
    if (end_ > pos_) {
      return InvalidArgument(index_.path + ": truncated: " + std::to_string(end_ - pos_) +
                             " bytes at byte " + std::to_string(offset_) +
                             " are less than a record header");
    }
    return false;
  }
  const char* h = buf_.data() + pos_;
  const uint64_t length = Le64(h);
  if (MaskCrc(Crc32c(h, 8)) != Le32(h + 8)) {
    return InvalidArgument(index_.path + ": record " + std::to_string(record_) + " at byte " +
                           std::to_string(offset_) + ": bad length checksum");
  }
  // A length past the indexed data is a changed or crafted file: refused
  // before it sizes a buffer.
  const uint64_t left = index_.data_size > offset_ ? index_.data_size - offset_ : 0;
  if (length > kMaxTfLength || kTfHeader + length + 4 > left) {
    return InvalidArgument(index_.path + ": record " + std::to_string(record_) + " at byte " +
                           std::to_string(offset_) + " declares " + std::to_string(length) +
                           " bytes, more than the " + std::to_string(left) +
                           " bytes left of the indexed data (changed since it was indexed?)");
  }
  EDL_ASSIGN_OR_RETURN(bool whole, Need(kTfHeader + static_cast<size_t>(length) + 4));
  if (!whole) {
    return InvalidArgument(index_.path + ": truncated: record " + std::to_string(record_) +
                           " at byte " + std::to_string(offset_) + " declares " +
                           std::to_string(length) + " bytes, but the data ends at byte " +
                           std::to_string(offset_ + (end_ - pos_)));
  }
  const char* data = buf_.data() + pos_ + kTfHeader;
  if (MaskCrc(Crc32c(data, length)) != Le32(data + length)) {
    return InvalidArgument(index_.path + ": record " + std::to_string(record_) + " at byte " +
                           std::to_string(offset_) + ": data checksum mismatch");
  }
  payload->assign(data, length);
  pos_ += kTfHeader + length + 4;
  offset_ += kTfHeader + length + 4;
  ++record_;
  return true;
}

}  // namespace edl::data
