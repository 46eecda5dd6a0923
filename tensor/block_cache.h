// BlockCache: recycles large CPU storage blocks by size, so that a training
// step, which allocates the same activation shapes every time, neither maps
// fresh pages nor page-faults them in again. Blocks of at least
// kMinCachedBytes are rounded up to whole pages; the cache holds at most
// kMaxCachedBytes of idle blocks and frees beyond that.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <cstddef>

namespace edl::tensor {

class BlockCache {
 public:
  static constexpr size_t kMinCachedBytes = 64 << 10;
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;

  // A 64-byte aligned block of at least `bytes`. Never null (checks).
  static void* Allocate(size_t bytes);
  // REQUIRES: block came from Allocate(bytes) with the same bytes.
  static void Release(void* block, size_t bytes);
};

}  // namespace edl::tensor
