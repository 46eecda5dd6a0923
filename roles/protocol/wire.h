// The byte-level wire format the protocol codec is built from (docs/rpc.md):
// little-endian fixed-width integers and doubles, LEB128 varints for lengths,
// length-prefixed strings, and tensors as a dtype byte, a rank, the dims,
// zero padding up to the next multiple of 64 bytes from the message's start
// (only when there are element bytes), and the raw element bytes (or a
// single marker byte for an undefined tensor). The padding lets a received
// message, which lies in a 64-byte aligned block, lend its tensors their
// storage without a copy.
//
// The format is canonical: one value has exactly one encoding (varints are
// minimal, bools are 0 or 1, padding is zeros), so decode(encode(x)) == x
// and encode(decode(b)) == b for every b that decodes.
//
// Writers come in two kinds with the same interface: SizeCounter counts the
// bytes a message will take, Writer builds them as a gather payload
// (net/payload.h) in which a large tensor is borrowed from its own storage,
// not copied. Reader never reads past its input; its first failure is
// sticky (later reads return zeros) and is reported as one InvalidArgument
// naming the field path, e.g.
// "PushGradientsRequest.dense[2].value: tensor float32[1000, 1000] claims
// 4000000 bytes after 17 bytes of padding, 29 left".
//
// Not thread-safe; one Writer or Reader per message.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/payload.h"
#include "tensor/tensor.h"

namespace edl::roles::protocol {

inline constexpr size_t kMaxStringBytes = size_t{64} << 20;  // 64 MiB
inline constexpr size_t kMaxVectorItems = 100'000'000;
inline constexpr int kMaxTensorRank = 8;
// The tensor marker byte that stands for an undefined tensor.
inline constexpr uint8_t kUndefinedTensor = 0xFF;
// Tensor element bytes start at a multiple of this from the message start.
inline constexpr size_t kTensorAlignment = 64;
// Tensors at least this large are sent from their own storage.
inline constexpr size_t kBorrowTensorBytes = 16 << 10;

// The zero bytes that bring `position` to the next multiple of
// kTensorAlignment.
inline size_t TensorPadding(size_t position) {
  return (kTensorAlignment - position % kTensorAlignment) % kTensorAlignment;
}

// Counts the bytes the matching Writer calls would append.
class SizeCounter {
 public:
  void U8(uint8_t) { size_ += 1; }
  void Bool(bool) { size_ += 1; }
  void I32(int32_t) { size_ += 4; }
  void I64(int64_t) { size_ += 8; }
  void U64(uint64_t) { size_ += 8; }
  void F64(double) { size_ += 8; }
  void Varint(uint64_t v);
  void Bytes(const void*, size_t n) { size_ += n; }
  void String(std::string_view s);
  void Doubles(const std::vector<double>& v);
  void Tensor(const tensor::Tensor& t);

  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
};

// Builds encoded values as a payload: small values are appended to owned
// pieces, tensors of kBorrowTensorBytes or more are borrowed (their storage
// is kept alive by the payload).
class Writer {
 public:
  // `expected_bytes`: the final size (from a SizeCounter); owned pieces
  // reserve what they can need.
  explicit Writer(size_t expected_bytes = 0) : expected_(expected_bytes) {
    tail_.reserve(std::min(expected_bytes, kBorrowTensorBytes * 4));
  }

  void U8(uint8_t v) { tail_.push_back(static_cast<char>(v)); }
  void Bool(bool v) { U8(v ? 1 : 0); }
  void I32(int32_t v) { Bytes(&v, sizeof v); }
  void I64(int64_t v) { Bytes(&v, sizeof v); }
  void U64(uint64_t v) { Bytes(&v, sizeof v); }
  void F64(double v) { Bytes(&v, sizeof v); }
  void Varint(uint64_t v);
  void Bytes(const void* p, size_t n) { tail_.append(static_cast<const char*>(p), n); }
  void String(std::string_view s);
  void Doubles(const std::vector<double>& v);
  // REQUIRES: t is undefined or a CPU tensor.
  void Tensor(const tensor::Tensor& t);

  // The bytes written so far (the position in the message).
  size_t size() const { return payload_.size() + tail_.size(); }
  net::Payload TakePayload() &&;
  // The bytes as one string (journal records and other small messages).
  std::string Take() && { return std::move(*this).TakePayload().Flatten(); }

 private:
  size_t expected_;
  net::Payload payload_;  // everything before tail_
  std::string tail_;
};

// Reads encoded values from a borrowed buffer (which must outlive it).
class Reader {
 public:
  // `message`: the message name that opens every error path. Tensors are
  // copied out of `bytes`.
  Reader(std::string_view bytes, const char* message) : data_(bytes), message_(message) {}
  // Tensors view `bytes` (no copy) and keep it alive.
  Reader(const net::Bytes& bytes, const char* message)
      : data_(bytes.view()), owner_(bytes.owner()), message_(message) {}

  // Names the field (or vector item) being read for error messages while the
  // returned scope lives: "Message.field[3].sub".
  class Scope {
   public:
    Scope(Reader* r, const char* name, int64_t index) : r_(r) {
      r_->path_.push_back({name, index});
    }
    ~Scope() { r_->path_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Reader* r_;
  };
  [[nodiscard]] Scope Field(const char* name) { return Scope(this, name, -1); }
  [[nodiscard]] Scope Item(const char* name, size_t index) {
    return Scope(this, name, static_cast<int64_t>(index));
  }

  // Each read names the `field` it reads (the last part of an error path).
  uint8_t U8(const char* field);
  bool Bool(const char* field);
  int32_t I32(const char* field) { return Fixed<int32_t>(field); }
  int64_t I64(const char* field) { return Fixed<int64_t>(field); }
  uint64_t U64(const char* field) { return Fixed<uint64_t>(field); }
  double F64(const char* field) { return Fixed<double>(field); }
  uint64_t Varint(const char* field);
  std::string String(const char* field);
  std::vector<double> Doubles(const char* field);
  // The item count of a vector whose items each take at least
  // `min_item_bytes` on the wire; checked against the cap and the bytes left,
  // so reserving that many items is safe.
  size_t Count(const char* field, size_t min_item_bytes);
  tensor::Tensor Tensor(const char* field);

  // Records "<path>: what" as the failure unless one was recorded already.
  void Fail(const std::string& what);
  bool ok() const { return error_.empty(); }
  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  // OK, or the first failure; also fails when bytes are left over.
  Status Finish();

 private:
  struct PathEntry {
    const char* name;
    int64_t index;  // -1: a plain field
  };

  // Fails (naming `what`, `n` and the bytes left) unless n bytes are left.
  bool Need(size_t n, const char* what);
  template <typename T>
  T Fixed(const char* field) {
    field_ = field;
    T v{};
    if (!Need(sizeof v, "value")) return v;
    std::memcpy(&v, data_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }

  std::string_view data_;
  std::shared_ptr<void> owner_;  // set: tensors view data_
  size_t pos_ = 0;
  const char* message_;
  std::vector<PathEntry> path_;
  const char* field_ = nullptr;  // the field being read, appended to path_
  std::string error_;
};

}  // namespace edl::roles::protocol
