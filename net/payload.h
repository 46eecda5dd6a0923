// The two shapes an RPC body takes (docs/rpc.md, "Bodies without copies"):
//
//   Bytes   — a body as received: one shared, 64-byte aligned block from
//             the process's BlockCache (base/block_cache.h), read straight
//             from the socket. Decoded tensors view it (no copy) and keep
//             it alive through owner().
//   Payload — a body to send: pieces written in order with one gather
//             write; each piece is either owned (small fields) or borrowed
//             from memory that a keep-alive handle holds (a tensor's
//             storage), so large tensors go from their own storage to the
//             socket.
//
// Both are plain values, safe to move between threads; neither is
// synchronized.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace edl::net {

class Bytes {
 public:
  Bytes() = default;  // empty
  // `size` uninitialized bytes, 64-byte aligned.
  static Bytes Allocate(size_t size);
  static Bytes Copy(std::string_view bytes);

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {data_, size_}; }
  // Keeps the bytes alive (null when empty).
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  std::shared_ptr<void> owner_;
  char* data_ = nullptr;
  size_t size_ = 0;
};

class Payload {
 public:
  struct Piece {
    const char* data;
    size_t size;
  };

  Payload() = default;
  explicit Payload(std::string bytes) { Append(std::move(bytes)); }

  // Adds an owned piece.
  void Append(std::string bytes);
  // Adds a piece the payload does not own; `keep` holds it alive (may be
  // null when the caller guarantees that itself, e.g. for a blocking call).
  void Borrow(const void* data, size_t size, std::shared_ptr<const void> keep);

  size_t size() const { return size_; }
  // The pieces in order (addresses stay valid while the payload lives and
  // is not modified).
  std::vector<Piece> Pieces() const;
  // The whole payload as one string (a copy unless it is a single owned
  // piece taken by the && overload).
  std::string Flatten() const&;
  std::string Flatten() &&;

 private:
  struct Part {
    std::unique_ptr<std::string> owned;  // stable address across moves
    Piece piece;
    std::shared_ptr<const void> keep;
  };
  std::vector<Part> parts_;
  size_t size_ = 0;
};

}  // namespace edl::net
