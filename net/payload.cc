#include "net/payload.h"

#include <cstring>
#include <utility>

#include "base/block_cache.h"

namespace edl::net {

Bytes Bytes::Allocate(size_t size) {
  Bytes b;
  if (size == 0) return b;
  void* block = BlockCache::Allocate(size);
  b.owner_ = std::shared_ptr<void>(block, [size](void* p) { BlockCache::Release(p, size); });
  b.data_ = static_cast<char*>(block);
  b.size_ = size;
  return b;
}

Bytes Bytes::Copy(std::string_view bytes) {
  Bytes b = Allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
  return b;
}

void Payload::Append(std::string bytes) {
  if (bytes.empty()) return;
  Part part;
  part.owned = std::make_unique<std::string>(std::move(bytes));
  part.piece = Piece{part.owned->data(), part.owned->size()};
  size_ += part.piece.size;
  parts_.push_back(std::move(part));
}

void Payload::Borrow(const void* data, size_t size, std::shared_ptr<const void> keep) {
  if (size == 0) return;
  Part part;
  part.piece = Piece{static_cast<const char*>(data), size};
  part.keep = std::move(keep);
  size_ += size;
  parts_.push_back(std::move(part));
}

std::vector<Payload::Piece> Payload::Pieces() const {
  std::vector<Piece> pieces;
  pieces.reserve(parts_.size());
  for (const Part& p : parts_) pieces.push_back(p.piece);
  return pieces;
}

std::string Payload::Flatten() const& {
  std::string out;
  out.reserve(size_);
  for (const Part& p : parts_) out.append(p.piece.data, p.piece.size);
  return out;
}

std::string Payload::Flatten() && {
  if (parts_.size() == 1 && parts_[0].owned) return std::move(*parts_[0].owned);
  return static_cast<const Payload&>(*this).Flatten();
}

}  // namespace edl::net
