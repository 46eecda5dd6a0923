#include "data/buffered_input.h"

#include <algorithm>
#include <cstring>

namespace edl::data {

namespace {
constexpr size_t kChunk = 1 << 20;
}  // namespace

BufferedInput::BufferedInput(ByteStream& stream)
    : stream_(stream), buf_(kChunk, '\0'), offset_(stream.offset()) {}

Result<bool> BufferedInput::Need(size_t n) {
  while (end_ - pos_ < n) {
    if (eof_) return false;
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (buf_.size() - end_ < kChunk / 4 || buf_.size() < n) {
      buf_.resize(std::max(buf_.size() * 2, end_ + n));
    }
    EDL_ASSIGN_OR_RETURN(size_t got, stream_.Read(buf_.data() + end_, buf_.size() - end_));
    if (got == 0) eof_ = true;
    end_ += got;
  }
  return true;
}

Result<bool> BufferedInput::Skip(uint64_t n) {
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

}  // namespace edl::data
