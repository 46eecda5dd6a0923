#include "base/block_cache.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/check.h"

namespace edl {
namespace {

struct Pool {
  std::mutex mu;                                        // guards everything below
  std::unordered_map<size_t, std::vector<void*>> idle;  // by capacity
  size_t idle_bytes = 0;
};

Pool& GetPool() {
  static Pool* pool = new Pool;  // never destroyed: used by static tensors
  return *pool;
}

// The size actually allocated for `bytes`.
size_t Capacity(size_t bytes) {
  EDL_CHECK_LE(bytes, SIZE_MAX / 2) << "a block of " << bytes << " bytes";
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  if (rounded >= BlockCache::kMinCachedBytes) rounded = (rounded + 4095) / 4096 * 4096;
  return rounded;
}

}  // namespace

void* BlockCache::Allocate(size_t bytes) {
  const size_t rounded = Capacity(bytes);
  if (rounded >= kMinCachedBytes) {
    Pool& pool = GetPool();
    std::lock_guard<std::mutex> lock(pool.mu);
    auto it = pool.idle.find(rounded);
    if (it != pool.idle.end() && !it->second.empty()) {
      void* block = it->second.back();
      it->second.pop_back();
      pool.idle_bytes -= rounded;
      return block;
    }
  }
  void* block = std::aligned_alloc(rounded >= kMinCachedBytes ? 4096 : 64, rounded);
  EDL_CHECK(block != nullptr) << "out of memory allocating " << bytes << " bytes";
  return block;
}

void BlockCache::Release(void* block, size_t bytes) {
  if (block == nullptr) return;
  const size_t capacity = Capacity(bytes);
  if (capacity >= kMinCachedBytes) {
    Pool& pool = GetPool();
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.idle_bytes + capacity <= kMaxCachedBytes) {
      pool.idle[capacity].push_back(block);
      pool.idle_bytes += capacity;
      return;
    }
  }
  std::free(block);
}

}  // namespace edl
