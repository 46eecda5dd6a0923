// The record index's file: SerializeRecordIndex / ParseRecordIndex.
// Layout (little-endian): "EDLRIDX1", version u32, format u8, gzip u8,
// delimiter u8, file size u64, mtime ns u64, records u64, data size u64,
// every u64, the offsets (count u64, then u64 each), the access points
// (count u64, then in u64, out u64, bits u8, window size u64, the window
// deflated as length-prefixed bytes), and a CRC-32C of all before it.
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/check.h"
#include "data/crc32c.h"
#include "data/record_index.h"

namespace edl::data {
namespace {

constexpr char kMagic[8] = {'E', 'D', 'L', 'R', 'I', 'D', 'X', '1'};
constexpr uint32_t kVersion = 1;
// Deflate never inflates one compressed byte into more than 1032.
constexpr uint64_t kMaxDeflateRatio = 1032;

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
  size_t pos() const { return pos_; }

 private:
  const std::string& b_;
  std::string where_;
  size_t pos_ = 0;
};

std::string Deflate(const std::string& in) {
  uLongf size = compressBound(in.size());
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(in.data()),
            in.size(), 1);
  out.resize(size);
  return out;
}

}  // namespace

std::string SerializeRecordIndex(const RecordIndex& index) {
  EDL_CHECK(index.window_file.empty()) << "the windows of " << index.path << " are not in memory";
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

Result<RecordIndex> ParseRecordIndex(const std::string& bytes, const std::string& where,
                                     bool lazy_windows) {
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
  if (format < 1 || format > 3) return InvalidArgument(where + ": unknown record format");
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
  // Readers bound every record's length by the data size (record_reader.cc),
  // so it must be one the indexed file can hold: its size on disk (which
  // CheckIndexFresh compares with file_size), or deflate's largest ratio of
  // that for gzip.
  uint64_t most = index.file_size;
  if (index.gzip) {
    most = index.file_size > ~uint64_t{0} / kMaxDeflateRatio ? ~uint64_t{0}
                                                             : index.file_size * kMaxDeflateRatio;
  }
  if (index.data_size > most) {
    return InvalidArgument(where + ": record index says " + std::to_string(index.data_size) +
                           " bytes of data, more than a " +
                           (index.gzip ? "gzip file of " : "file of ") +
                           std::to_string(index.file_size) + " bytes holds");
  }
  EDL_ASSIGN_OR_RETURN(index.every, r.U64());
  EDL_ASSIGN_OR_RETURN(uint64_t offsets, r.U64());
  if (index.every == 0 || offsets > body.size() / 8 || !r.Has(offsets * 8) ||
      offsets != index.num_records / index.every + (index.num_records % index.every != 0)) {
    return InvalidArgument(where + ": inconsistent record index");
  }
  index.offsets.resize(offsets);
  uint64_t previous = 0;
  for (auto& o : index.offsets) {
    EDL_ASSIGN_OR_RETURN(o, r.U64());
    if (o < previous || o > index.data_size) {
      return InvalidArgument(where + ": record offset " + std::to_string(o) +
                             " out of order or past the data's " + std::to_string(index.data_size) +
                             " bytes");
    }
    previous = o;
  }
  EDL_ASSIGN_OR_RETURN(uint64_t points, r.U64());
  if (points > body.size() / 25 || !r.Has(points * 25)) return r.Truncated();
  index.access.resize(points);
  for (GzipAccessPoint& p : index.access) {
    EDL_ASSIGN_OR_RETURN(p.in_offset, r.U64());
    EDL_ASSIGN_OR_RETURN(p.out_offset, r.U64());
    EDL_ASSIGN_OR_RETURN(uint8_t bits, r.U8());
    EDL_ASSIGN_OR_RETURN(uint64_t window, r.U64());
    const size_t at = sizeof kMagic + r.pos() + 8;  // the deflated bytes, in the file
    EDL_ASSIGN_OR_RETURN(std::string packed, r.Bytes());
    if (bits > 7 || window > 32768) return InvalidArgument(where + ": bad access point");
    p.bits = bits;
    if (lazy_windows && window > 0) {
      p.packed_at = at;
      p.packed_size = packed.size();
      p.packed_crc = Crc32c(packed.data(), packed.size());
      p.window_size = static_cast<uint32_t>(window);
      continue;
    }
    p.window.resize(window);
    uLongf size = window;
    if (uncompress(reinterpret_cast<Bytef*>(p.window.data()), &size,
                   reinterpret_cast<const Bytef*>(packed.data()), packed.size()) != Z_OK ||
        size != window) {
      return InvalidArgument(where + ": bad access point window");
    }
  }
  if (lazy_windows) {
    index.window_file = where;
    index.window_file_size = bytes.size();
  }
  return index;
}

Result<std::string> LoadAccessWindow(const RecordIndex& index, const GzipAccessPoint& point) {
  if (point.packed_size == 0) return point.window;
  const std::string& file = index.window_file;
  auto changed = [&](const std::string& why) {
    return InvalidArgument(file + ": " + why + " since it was loaded (the index of " + index.path +
                           " was rebuilt?)");
  };
  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFound(file + ": cannot open the record index: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  if (static_cast<uint64_t>(in.tellg()) != index.window_file_size) return changed("changed size");
  std::string packed(point.packed_size, '\0');
  in.seekg(static_cast<std::streamoff>(point.packed_at));
  if (!in.read(packed.data(), static_cast<std::streamsize>(packed.size()))) {
    return IoError(file + ": cannot read an access point's window");
  }
  if (Crc32c(packed.data(), packed.size()) != point.packed_crc) return changed("changed");
  std::string window(point.window_size, '\0');
  uLongf size = point.window_size;
  if (uncompress(reinterpret_cast<Bytef*>(window.data()), &size,
                 reinterpret_cast<const Bytef*>(packed.data()), packed.size()) != Z_OK ||
      size != point.window_size) {
    return InvalidArgument(file + ": bad access point window");
  }
  return window;
}

}  // namespace edl::data
