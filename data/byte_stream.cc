#include "data/byte_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace edl::data {
namespace {

constexpr size_t kInputBuffer = 256 * 1024;
constexpr size_t kWindow = 32 * 1024;

Status Errno(const std::string& path, const std::string& what) {
  const int e = errno;
  if (e == ENOENT) return NotFound(path + ": no such file");
  return IoError(path + ": " + what + ": " + std::strerror(e));
}

}  // namespace

ByteStream::ByteStream(std::string path, int fd, uint64_t file_size)
    : path_(std::move(path)), fd_(fd), file_size_(file_size) {}

ByteStream::~ByteStream() {
  if (strm_ready_) inflateEnd(&strm_);
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<ByteStream>> ByteStream::Open(const std::string& path) {
  return OpenAt(path, GzipAccessPoint{});
}

Result<std::unique_ptr<ByteStream>> ByteStream::OpenAt(const std::string& path,
                                                       const GzipAccessPoint& point) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = Errno(path, "cannot stat");
    ::close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": is a directory, not a data file");
  }
  std::unique_ptr<ByteStream> s(new ByteStream(path, fd, static_cast<uint64_t>(st.st_size)));
  unsigned char magic[2] = {0, 0};
  const ssize_t got = ::pread(fd, magic, 2, 0);
  if (got < 0) return Errno(path, "cannot read");
  s->gzip_ = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  if (!s->gzip_) {
    if (point.out_offset > s->file_size_) {
      return InvalidArgument(path + ": offset " + std::to_string(point.out_offset) +
                             " is past the end of the file (" + std::to_string(s->file_size_) +
                             " bytes)");
    }
    s->in_offset_ = point.out_offset;
    s->out_offset_ = point.out_offset;
    return s;
  }
  s->in_buf_.resize(kInputBuffer);
  if (point.in_offset == 0 && point.out_offset == 0) {
    EDL_RETURN_IF_ERROR(s->InitGzip(/*raw=*/false));
    return s;
  }
  // Resume inside a member (zran): raw deflate from the point's bit.
  EDL_RETURN_IF_ERROR(s->InitGzip(/*raw=*/true));
  s->raw_member_ = true;
  s->in_offset_ = point.in_offset - (point.bits ? 1 : 0);
  if (point.bits) {
    unsigned char byte = 0;
    if (::pread(fd, &byte, 1, static_cast<off_t>(s->in_offset_)) != 1) {
      return IoError(path + ": cannot read the access point at compressed byte " +
                     std::to_string(s->in_offset_) + " (the file changed since it was indexed?)");
    }
    ++s->in_offset_;
    inflatePrime(&s->strm_, point.bits, byte >> (8 - point.bits));
  }
  if (!point.window.empty()) {
    inflateSetDictionary(&s->strm_, reinterpret_cast<const Bytef*>(point.window.data()),
                         static_cast<uInt>(point.window.size()));
  }
  s->out_offset_ = point.out_offset;
  return s;
}

Status ByteStream::InitGzip(bool raw) {
  strm_ = z_stream{};
  // 15 + 32: zlib or gzip header, detected; -15: raw deflate.
  if (inflateInit2(&strm_, raw ? -15 : 15 + 32) != Z_OK) {
    return Internal(path_ + ": cannot initialize zlib");
  }
  strm_ready_ = true;
  return Status::Ok();
}

void ByteStream::RecordAccessPoints(uint64_t safety_spacing, AccessPointSink sink) {
  spacing_ = safety_spacing;
  sink_ = std::move(sink);
  history_.assign(kAccessHistory, '\0');
}

void ByteStream::MakePoint(const Boundary& b) {
  GzipAccessPoint p;
  p.in_offset = b.in_offset;
  p.out_offset = b.out_offset;
  p.bits = b.bits;
  const uint64_t have = std::min<uint64_t>(b.out_offset, kWindow);
  p.window.resize(have);
  // The window is output [out - have, out): at most two pieces of the ring.
  const uint64_t from = b.out_offset - have;
  const size_t at = static_cast<size_t>(from % kAccessHistory);
  const size_t first = static_cast<size_t>(std::min<uint64_t>(have, kAccessHistory - at));
  std::memcpy(p.window.data(), history_.data() + at, first);
  std::memcpy(p.window.data() + first, history_.data(), have - first);
  any_point_ = true;
  last_point_ = std::max(last_point_, b.out_offset);
  sink_(std::move(p));
}

bool ByteStream::AccessPointBefore(uint64_t at) {
  if (!sink_) return false;
  for (auto it = boundaries_.rbegin(); it != boundaries_.rend(); ++it) {
    if (it->out_offset > at) continue;
    // Its window must still be in the history.
    const uint64_t from = it->out_offset - std::min<uint64_t>(it->out_offset, kWindow);
    if (remembered_ - from > kAccessHistory) return false;
    if (!any_point_ || it->out_offset != last_point_) MakePoint(*it);
    return true;
  }
  return false;
}

Status ByteStream::Corrupt(const std::string& what) const {
  return IoError(path_ + ": corrupt gzip data near compressed byte " +
                 std::to_string(in_offset_ - strm_.avail_in) + ": " + what);
}

Status ByteStream::SkipZeroPadding() {
  while (strm_.avail_in > 0) {
    Bytef* end = strm_.next_in + strm_.avail_in;
    Bytef* nonzero = std::find_if(strm_.next_in, end, [](Bytef b) { return b != 0; });
    strm_.avail_in -= static_cast<uInt>(nonzero - strm_.next_in);
    strm_.next_in = nonzero;
    if (nonzero != end) {
      return Corrupt("a byte other than zero in the padding after the last gzip member");
    }
    EDL_RETURN_IF_ERROR(FillInput());
  }
  return Status::Ok();
}

// Keeps what inflate has not consumed and reads more behind it.
Status ByteStream::FillInput() {
  if (at_eof_) return Status::Ok();
  size_t keep = strm_.avail_in;
  if (keep > 0 && strm_.next_in != reinterpret_cast<Bytef*>(in_buf_.data())) {
    std::memmove(in_buf_.data(), strm_.next_in, keep);
  }
  const ssize_t n =
      ::pread(fd_, in_buf_.data() + keep, in_buf_.size() - keep, static_cast<off_t>(in_offset_));
  if (n < 0) return Errno(path_, "cannot read");
  if (n == 0) at_eof_ = true;
  in_offset_ += static_cast<uint64_t>(n);
  strm_.next_in = reinterpret_cast<Bytef*>(in_buf_.data());
  strm_.avail_in = static_cast<uInt>(keep + static_cast<size_t>(n));
  return Status::Ok();
}

void ByteStream::Remember(const char* data, size_t n, uint64_t at) {
  if (!sink_ || n == 0) return;
  if (n > kAccessHistory) {
    data += n - kAccessHistory;
    at += n - kAccessHistory;
    n = kAccessHistory;
  }
  const size_t pos = static_cast<size_t>(at % kAccessHistory);
  const size_t first = std::min<size_t>(n, kAccessHistory - pos);
  std::memcpy(history_.data() + pos, data, first);
  std::memcpy(history_.data(), data + first, n - first);
  remembered_ = at + n;
}

Result<size_t> ByteStream::Read(char* out, size_t n) {
  if (n == 0 || data_ended_) return size_t{0};
  return gzip_ ? ReadGzip(out, n) : ReadPlain(out, n);
}

Result<size_t> ByteStream::ReadPlain(char* out, size_t n) {
  const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(in_offset_));
  if (got < 0) return Errno(path_, "cannot read");
  in_offset_ += static_cast<uint64_t>(got);
  out_offset_ += static_cast<uint64_t>(got);
  if (got == 0) data_ended_ = true;
  return static_cast<size_t>(got);
}

Result<size_t> ByteStream::ReadGzip(char* out, size_t n) {
  strm_.next_out = reinterpret_cast<Bytef*>(out);
  strm_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
  const uInt asked = strm_.avail_out;
  while (strm_.avail_out > 0) {
    if (strm_.avail_in == 0) {
      EDL_RETURN_IF_ERROR(FillInput());
      if (strm_.avail_in == 0) {
        return IoError(path_ + ": truncated gzip data: the file ends at byte " +
                       std::to_string(file_size_) + " inside a compressed member");
      }
    }
    Bytef* before = strm_.next_out;
    const uint64_t before_offset = out_offset_ + (asked - strm_.avail_out);
    const int ret = inflate(&strm_, sink_ ? Z_BLOCK : Z_NO_FLUSH);
    Remember(reinterpret_cast<const char*>(before), static_cast<size_t>(strm_.next_out - before),
             before_offset);
    if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_MEM_ERROR || ret == Z_STREAM_ERROR) {
      return Corrupt(strm_.msg ? strm_.msg : "inflate failed");
    }
    const uint64_t out_now = out_offset_ + (asked - strm_.avail_out);
    if (sink_ && (strm_.data_type & 128) && !(strm_.data_type & 64)) {
      // A block boundary (not after the last block): a possible access point.
      Boundary b;
      b.in_offset = in_offset_ - strm_.avail_in;
      b.out_offset = out_now;
      b.bits = strm_.data_type & 7;
      if (boundaries_.empty() || boundaries_.back().out_offset != out_now) {
        boundaries_.push_back(b);
      }
      while (boundaries_.size() > 1 &&
             out_now - (boundaries_.front().out_offset -
                        std::min<uint64_t>(boundaries_.front().out_offset, kWindow)) >
                 kAccessHistory) {
        boundaries_.pop_front();
      }
      if (!any_point_ || out_now - last_point_ >= spacing_) MakePoint(b);
    }
    if (ret == Z_STREAM_END) {
      // The end of a member: another may follow (concatenated gzip).
      if (raw_member_) {
        // Resumed in raw mode: the member's 8-byte trailer is still input.
        for (int skipped = 0; skipped < 8;) {
          if (strm_.avail_in == 0) {
            EDL_RETURN_IF_ERROR(FillInput());
            if (strm_.avail_in == 0) return IoError(path_ + ": truncated gzip trailer");
          }
          const int step = static_cast<int>(std::min<uInt>(strm_.avail_in, 8 - skipped));
          strm_.next_in += step;
          strm_.avail_in -= step;
          skipped += step;
        }
        raw_member_ = false;
      }
      if (strm_.avail_in < 2) EDL_RETURN_IF_ERROR(FillInput());
      if (strm_.avail_in == 0) {
        data_ended_ = true;
        break;
      }
      if (strm_.next_in[0] == 0) {
        EDL_RETURN_IF_ERROR(SkipZeroPadding());
        data_ended_ = true;
        break;
      }
      if (strm_.avail_in < 2 || strm_.next_in[0] != 0x1f || strm_.next_in[1] != 0x8b) {
        return Corrupt(
            "bytes after the end of a gzip member that are neither another member nor zero "
            "padding");
      }
      inflateEnd(&strm_);
      strm_ready_ = false;
      const Bytef* next = strm_.next_in;
      const uInt avail = strm_.avail_in;
      Bytef* next_out = strm_.next_out;
      const uInt avail_out = strm_.avail_out;
      EDL_RETURN_IF_ERROR(InitGzip(/*raw=*/false));
      strm_.next_in = const_cast<Bytef*>(next);
      strm_.avail_in = avail;
      strm_.next_out = next_out;
      strm_.avail_out = avail_out;
    } else if (ret == Z_BUF_ERROR && strm_.avail_in > 0 && strm_.avail_out > 0) {
      return Corrupt("inflate made no progress");
    }
  }
  const size_t produced = asked - strm_.avail_out;
  out_offset_ += produced;
  return produced;
}

}  // namespace edl::data
