// BufferedInput: a ByteStream read through a growing buffer, for parsers
// that need n whole bytes at a time (a TFRecord frame, a CSV row): Need(n)
// makes at least n unread bytes available at data() (moving the buffer;
// pointers into it are invalid after a Need), Advance(n) consumes them.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "data/byte_stream.h"

namespace edl::data {

class BufferedInput {
 public:
  // `stream` must outlive this.
  explicit BufferedInput(ByteStream& stream);

  // At least n unread bytes; false when the data ends first (available()
  // then says how many there were).
  Result<bool> Need(size_t n);
  // Consumes n bytes, reading past the buffer as needed; false when the
  // data ends first.
  Result<bool> Skip(uint64_t n);
  const char* data() const { return buf_.data() + pos_; }
  size_t available() const { return end_ - pos_; }
  // REQUIRES: n <= available().
  void Advance(size_t n) {
    pos_ += n;
    offset_ += n;
  }
  // Uncompressed offset of data() in the file.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return stream_.path(); }

 private:
  ByteStream& stream_;
  std::string buf_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t offset_ = 0;
};

}  // namespace edl::data
