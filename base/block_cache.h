// BlockCache: recycles large CPU blocks by size (tensor storage, RPC bodies),
// so that a training step, which allocates the same activation shapes every
// time, and an RPC, which receives the same body sizes every time, neither
// map fresh pages nor page-fault them in again. Blocks of at least
// kMinCachedBytes are rounded up to whole pages; the cache holds at most
// kMaxCachedBytes of idle blocks and frees beyond that.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <cstddef>

namespace edl {

class BlockCache {
 public:
  static constexpr size_t kMinCachedBytes = 64 << 10;
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;

  // A 64-byte aligned block of at least `bytes`. Never null (checks).
  static void* Allocate(size_t bytes);
  // REQUIRES: block came from Allocate(bytes) with the same bytes.
  static void Release(void* block, size_t bytes);
};

}  // namespace edl
