// The byte-level wire format the protocol codec is built from (docs/rpc.md):
// little-endian fixed-width integers and doubles, LEB128 varints for lengths,
// length-prefixed strings, and tensors as a dtype byte, a rank, the dims and
// the raw element bytes (or a single marker byte for an undefined tensor).
//
// The format is canonical: one value has exactly one encoding (varints are
// minimal, bools are 0 or 1), so decode(encode(x)) == x and
// encode(decode(b)) == b for every b that decodes.
//
// Writers come in two kinds with the same interface: SizeCounter counts the
// bytes a message will take, Writer appends them to a string reserved up
// front, so a tensor costs one memcpy. Reader never reads past its input;
// its first failure is sticky (later reads return zeros) and is reported as
// one InvalidArgument naming the field path, e.g.
// "PushGradientsRequest.dense[2].value: tensor claims 4000000 bytes, 12 left".
//
// Not thread-safe; one Writer or Reader per message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::roles::protocol {

inline constexpr size_t kMaxStringBytes = size_t{64} << 20;  // 64 MiB
inline constexpr size_t kMaxVectorItems = 100'000'000;
inline constexpr int kMaxTensorRank = 8;
// The tensor marker byte that stands for an undefined tensor.
inline constexpr uint8_t kUndefinedTensor = 0xFF;

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

// Appends encoded values to an owned string.
class Writer {
 public:
  // `expected_bytes`: the final size (from a SizeCounter), reserved up front.
  explicit Writer(size_t expected_bytes = 0) { out_.reserve(expected_bytes); }

  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void Bool(bool v) { U8(v ? 1 : 0); }
  void I32(int32_t v) { Bytes(&v, sizeof v); }
  void I64(int64_t v) { Bytes(&v, sizeof v); }
  void U64(uint64_t v) { Bytes(&v, sizeof v); }
  void F64(double v) { Bytes(&v, sizeof v); }
  void Varint(uint64_t v);
  void Bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void String(std::string_view s);
  void Doubles(const std::vector<double>& v);
  // REQUIRES: t is undefined or a CPU tensor.
  void Tensor(const tensor::Tensor& t);

  std::string Take() && { return std::move(out_); }

 private:
  std::string out_;
};

// Reads encoded values from a borrowed buffer (which must outlive it).
class Reader {
 public:
  // `message`: the message name that opens every error path.
  Reader(std::string_view bytes, const char* message) : data_(bytes), message_(message) {}

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
  size_t pos_ = 0;
  const char* message_;
  std::vector<PathEntry> path_;
  const char* field_ = nullptr;  // the field being read, appended to path_
  std::string error_;
};

}  // namespace edl::roles::protocol
