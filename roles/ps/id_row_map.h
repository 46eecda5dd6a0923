// IdRowMap: an embedding shard's id -> row index, as one flat
// open-addressing table (linear probing, at most half full): a lookup is
// one or two cache lines, where std::unordered_map chases a node per id.
// Ids are non-negative (the PS refuses others before they get here).
//
// Not thread-safe: a shard's lock guards it.
#pragma once

#include <cstdint>
#include <vector>

#include "base/check.h"

namespace edl::roles::ps {

class IdRowMap {
 public:
  // The row of `id`, or -1.
  int64_t Find(int64_t id) const {
    if (slots_.empty()) return -1;
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == id) return s.row;
      if (s.id == kEmpty) return -1;
    }
  }

  // Starts loading the cache line where a lookup of `id` begins, so that a
  // batch of lookups overlaps its memory misses.
  void Prefetch(int64_t id) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Home(id)]);
  }

  // REQUIRES: id >= 0 and not present.
  void Insert(int64_t id, int64_t row) {
    EDL_CHECK_GE(id, 0) << "negative embedding id";
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    Place(id, row);
    ++size_;
  }

  size_t size() const { return size_; }

 private:
  static constexpr int64_t kEmpty = -1;
  struct Slot {
    int64_t id = kEmpty;
    int64_t row = 0;
  };

  size_t Home(int64_t id) const {
    uint64_t x = static_cast<uint64_t>(id);  // splitmix64's finalizer
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return static_cast<size_t>(x ^ (x >> 31)) & mask_;
  }
  void Place(int64_t id, int64_t row) {
    size_t i = Home(id);
    while (slots_[i].id != kEmpty) i = (i + 1) & mask_;
    slots_[i] = Slot{id, row};
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.id != kEmpty) Place(s.id, s.row);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace edl::roles::ps
