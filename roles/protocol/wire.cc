#include "roles/protocol/wire.h"

#include <bit>
#include <limits>

namespace edl::roles::protocol {

// Fixed-width values are copied as they lie in memory.
static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian; add byte swaps for this host");

namespace {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

bool KnownDType(uint8_t d) { return d <= static_cast<uint8_t>(tensor::DType::kFloat16); }

}  // namespace

// ---- SizeCounter ---------------------------------------------------------

void SizeCounter::Varint(uint64_t v) { size_ += VarintSize(v); }

void SizeCounter::String(std::string_view s) {
  Varint(s.size());
  size_ += s.size();
}

void SizeCounter::Doubles(const std::vector<double>& v) {
  Varint(v.size());
  size_ += v.size() * sizeof(double);
}

void SizeCounter::Tensor(const tensor::Tensor& t) {
  size_ += 1;
  if (!t.defined()) return;
  Varint(static_cast<uint64_t>(t.rank()));
  for (int64_t d : t.shape()) Varint(static_cast<uint64_t>(d));
  if (t.bytes() == 0) return;
  size_ += TensorPadding(size_) + t.bytes();
}

// ---- Writer --------------------------------------------------------------

void Writer::Varint(uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  tail_.append(buf, n);
}

void Writer::String(std::string_view s) {
  EDL_CHECK_LE(s.size(), kMaxStringBytes) << "string too long for the wire";
  Varint(s.size());
  tail_.append(s.data(), s.size());
}

void Writer::Doubles(const std::vector<double>& v) {
  EDL_CHECK_LE(v.size(), kMaxVectorItems) << "vector too long for the wire";
  Varint(v.size());
  Bytes(v.data(), v.size() * sizeof(double));
}

void Writer::Tensor(const tensor::Tensor& t) {
  if (!t.defined()) {
    U8(kUndefinedTensor);
    return;
  }
  EDL_CHECK(t.device() == tensor::Device::kCPU)
      << "only CPU tensors go on the wire; copy to the CPU first";
  EDL_CHECK_LE(t.rank(), kMaxTensorRank) << "tensor rank too high for the wire";
  U8(static_cast<uint8_t>(t.dtype()));
  Varint(static_cast<uint64_t>(t.rank()));
  for (int64_t d : t.shape()) Varint(static_cast<uint64_t>(d));
  const size_t bytes = t.bytes();
  if (bytes == 0) return;
  tail_.append(TensorPadding(size()), '\0');
  if (bytes < kBorrowTensorBytes) {
    Bytes(t.raw_data(), bytes);
    return;
  }
  payload_.Append(std::move(tail_));
  payload_.Borrow(t.raw_data(), bytes, t.storage_owner());
  tail_ = std::string();
  const size_t left = expected_ > size() ? expected_ - size() : 0;
  tail_.reserve(std::min(left, kBorrowTensorBytes * 4));
}

net::Payload Writer::TakePayload() && {
  payload_.Append(std::move(tail_));
  return std::move(payload_);
}

// ---- Reader --------------------------------------------------------------

void Reader::Fail(const std::string& what) {
  if (!error_.empty()) return;
  error_ = message_;
  for (const PathEntry& e : path_) {
    error_ += '.';
    error_ += e.name;
    if (e.index >= 0) error_ += "[" + std::to_string(e.index) + "]";
  }
  if (field_ != nullptr) {
    error_ += '.';
    error_ += field_;
  }
  error_ += ": ";
  error_ += what;
  pos_ = data_.size();  // later reads fail fast and return zeros
}

bool Reader::Need(size_t n, const char* what) {
  if (!ok()) return false;
  if (n <= remaining()) return true;
  Fail(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
       std::to_string(remaining()) + " left");
  return false;
}

uint8_t Reader::U8(const char* field) {
  field_ = field;
  if (!Need(1, "value")) return 0;
  return static_cast<uint8_t>(data_[pos_++]);
}

bool Reader::Bool(const char* field) {
  field_ = field;
  if (!Need(1, "bool")) return false;
  const uint8_t v = static_cast<uint8_t>(data_[pos_]);
  if (v > 1) {
    Fail("bool must be 0 or 1, got " + std::to_string(v));
    return false;
  }
  ++pos_;
  return v == 1;
}

uint64_t Reader::Varint(const char* field) {
  field_ = field;
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (!Need(1, "varint")) return 0;
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (i == 9 && b > 1) {
      Fail("varint overflows 64 bits");
      return 0;
    }
    v |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) {
      if (b == 0 && i > 0) {
        Fail("non-canonical varint (redundant trailing zero byte)");
        return 0;
      }
      return v;
    }
  }
  Fail("varint longer than 10 bytes");
  return 0;
}

std::string Reader::String(const char* field) {
  const uint64_t n = Varint(field);
  if (!ok()) return {};
  if (n > kMaxStringBytes) {
    Fail("string length " + std::to_string(n) + " exceeds the " + std::to_string(kMaxStringBytes) +
         "-byte cap");
    return {};
  }
  if (!Need(n, "string")) return {};
  std::string s(data_.substr(pos_, n));
  pos_ += n;
  return s;
}

std::vector<double> Reader::Doubles(const char* field) {
  const size_t n = Count(field, sizeof(double));
  std::vector<double> v(n);
  if (n > 0) {
    std::memcpy(v.data(), data_.data() + pos_, n * sizeof(double));
    pos_ += n * sizeof(double);
  }
  return v;
}

size_t Reader::Count(const char* field, size_t min_item_bytes) {
  const uint64_t n = Varint(field);
  if (!ok()) return 0;
  if (n > kMaxVectorItems) {
    Fail("vector of " + std::to_string(n) + " items exceeds the cap of " +
         std::to_string(kMaxVectorItems));
    return 0;
  }
  if (min_item_bytes > 0 && n > remaining() / min_item_bytes) {
    Fail("vector claims " + std::to_string(n) + " items of at least " +
         std::to_string(min_item_bytes) + " bytes, " + std::to_string(remaining()) + " bytes left");
    return 0;
  }
  return static_cast<size_t>(n);
}

tensor::Tensor Reader::Tensor(const char* field) {
  field_ = field;
  if (!Need(1, "tensor dtype")) return {};
  const uint8_t dtype_byte = static_cast<uint8_t>(data_[pos_++]);
  if (dtype_byte == kUndefinedTensor) return {};
  if (!KnownDType(dtype_byte)) {
    Fail("unknown tensor dtype " + std::to_string(dtype_byte));
    return {};
  }
  const auto dtype = static_cast<tensor::DType>(dtype_byte);
  const uint64_t rank = Varint(field);
  if (!ok()) return {};
  if (rank > kMaxTensorRank) {
    Fail("tensor rank " + std::to_string(rank) + " exceeds " + std::to_string(kMaxTensorRank));
    return {};
  }
  // The product of the nonzero dims must fit (so the tensor's own element
  // count cannot overflow either), whatever zero dims make it empty.
  tensor::Shape shape(rank);
  uint64_t nonzero_product = 1;
  bool has_zero = false;
  bool overflow = false;
  for (uint64_t i = 0; i < rank; ++i) {
    const uint64_t d = Varint(field);
    if (!ok()) return {};
    if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Fail("tensor dim " + std::to_string(i) + " is negative (" +
           std::to_string(static_cast<int64_t>(d)) + ")");
      return {};
    }
    shape[i] = static_cast<int64_t>(d);
    if (d == 0) {
      has_zero = true;
    } else {
      overflow = overflow || __builtin_mul_overflow(nonzero_product, d, &nonzero_product);
    }
  }
  uint64_t bytes = 0;
  if (overflow || nonzero_product > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
      __builtin_mul_overflow(nonzero_product, tensor::DTypeSize(dtype), &bytes)) {
    Fail("tensor shape " + tensor::ShapeString(shape) + " overflows 64 bits");
    return {};
  }
  if (has_zero) bytes = 0;
  const size_t pad = bytes > 0 ? TensorPadding(pos_) : 0;
  if (bytes > remaining() || pad > remaining() - bytes) {
    Fail("tensor " + std::string(tensor::DTypeName(dtype)) + tensor::ShapeString(shape) +
         " claims " + std::to_string(bytes) + " bytes after " + std::to_string(pad) +
         " bytes of padding, " + std::to_string(remaining()) + " left");
    return {};
  }
  if (pad > 0) {
    for (size_t i = 0; i < pad; ++i) {
      if (data_[pos_ + i] != 0) {
        Fail("nonzero padding byte before the tensor's elements");
        return {};
      }
    }
    pos_ += pad;
  }
  if (owner_ && bytes > 0) {
    // A view of the received block: no copy.
    char* data = const_cast<char*>(data_.data()) + pos_;
    pos_ += bytes;
    return tensor::Tensor::Adopt(owner_, data, std::move(shape), dtype);
  }
  tensor::Tensor t = tensor::Tensor::Empty(std::move(shape), dtype);
  if (bytes > 0) std::memcpy(t.raw_data(), data_.data() + pos_, bytes);
  pos_ += bytes;
  return t;
}

Status Reader::Finish() {
  if (ok() && remaining() > 0) {
    error_ = std::string(message_) + ": " + std::to_string(remaining()) +
             " trailing bytes after the message (at offset " + std::to_string(pos_) + ")";
  }
  if (ok()) return Status::Ok();
  return InvalidArgument(error_);
}

}  // namespace edl::roles::protocol
