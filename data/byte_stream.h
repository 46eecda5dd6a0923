// ByteStream: a data file's bytes in order, gunzipped when the file is gzip
// (by its magic bytes; concatenated members too), read with bounded memory
// (a few hundred KiB whatever the file's size). It knows the uncompressed
// offset of what it returns and can start in the middle of a file: a plain
// file at any byte, a gzip file at an access point (the zlib "zran"
// approach: the deflate stream's bit position at a block boundary plus the
// 32 KiB of output before it) recorded while streaming it earlier.
// Errors name the file and the (compressed) byte offset. Not thread-safe.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace edl::data {

struct GzipAccessPoint {
  uint64_t in_offset = 0;   // compressed bytes before the point (rounded up)
  uint64_t out_offset = 0;  // uncompressed bytes before the point
  int bits = 0;             // bits of byte in_offset - 1 still to be read (0-7)
  std::string window;       // the up to 32 KiB of output before the point
  // A window left in the index file (RecordIndex::window_file) until a
  // reader starts here: where its deflated bytes are, their CRC-32C, and
  // the inflated size. packed_size 0: `window` is in memory.
  uint64_t packed_at = 0;
  uint64_t packed_size = 0;
  uint32_t packed_crc = 0;
  uint32_t window_size = 0;
};

class ByteStream {
 public:
  using AccessPointSink = std::function<void(GzipAccessPoint point)>;

  static Result<std::unique_ptr<ByteStream>> Open(const std::string& path);
  // Starts a gzip file at `point`, or a plain file at byte point.out_offset.
  static Result<std::unique_ptr<ByteStream>> OpenAt(const std::string& path,
                                                    const GzipAccessPoint& point);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  bool gzip() const { return gzip_; }
  const std::string& path() const { return path_; }
  // Uncompressed offset of the next byte Read returns.
  uint64_t offset() const { return out_offset_; }
  // The file's size on disk.
  uint64_t file_size() const { return file_size_; }

  // Indexing a gzip file (call before the first Read): keeps the last
  // kAccessHistory bytes of output and the deflate block boundaries among
  // them, so that AccessPointBefore can make an access point at the last
  // boundary before any offset read recently. Makes points itself at the
  // start of the data and at the first boundary `safety_spacing` bytes past
  // the last point made (so that data whose blocks outgrow the history
  // still gets them). Points go to `sink`, not necessarily in order.
  void RecordAccessPoints(uint64_t safety_spacing, AccessPointSink sink);
  // Makes a point at the last block boundary at or before uncompressed
  // offset `at` (already read); false when that boundary has left the
  // history (or there is none).
  bool AccessPointBefore(uint64_t at);
  static constexpr uint64_t kAccessHistory = 4 << 20;

  // Up to n bytes; 0 at the end of the data.
  Result<size_t> Read(char* out, size_t n);

 private:
  ByteStream(std::string path, int fd, uint64_t file_size);
  Status InitGzip(bool raw);
  Result<size_t> ReadPlain(char* out, size_t n);
  Result<size_t> ReadGzip(char* out, size_t n);
  Status FillInput();
  // After the last member: zero bytes up to the end of the file (tar's and
  // some writers' padding), which `gzip -d` ignores; anything else is corrupt.
  Status SkipZeroPadding();
  Status Corrupt(const std::string& what) const;
  struct Boundary {
    uint64_t in_offset = 0;
    uint64_t out_offset = 0;
    int bits = 0;
  };
  void Remember(const char* data, size_t n, uint64_t at);
  void MakePoint(const Boundary& b);

  std::string path_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  bool gzip_ = false;
  uint64_t in_offset_ = 0;   // file bytes read into in_buf_ so far
  uint64_t out_offset_ = 0;  // uncompressed bytes returned
  bool at_eof_ = false;
  bool data_ended_ = false;
  // gzip
  z_stream strm_{};
  bool strm_ready_ = false;
  bool raw_member_ = false;  // resumed inside a member: its trailer is ours to skip
  std::string in_buf_;
  // Indexing: the last kAccessHistory bytes of output (byte o at
  // o % kAccessHistory) and the block boundaries whose windows they hold.
  std::string history_;
  uint64_t remembered_ = 0;  // output offset where the history ends
  std::deque<Boundary> boundaries_;
  uint64_t spacing_ = 0;
  uint64_t last_point_ = 0;  // the greatest out_offset of a point made
  bool any_point_ = false;
  AccessPointSink sink_;
};

}  // namespace edl::data
