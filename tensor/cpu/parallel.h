// Threads of the CPU backend: the configured count and a ParallelFor that
// splits [0, n) into contiguous chunks (so inner loops vectorize) across
// OpenMP threads, running inline when the work is small.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace edl::tensor::cpu {

// The thread count ops use; SetThreads also sets this thread's OpenMP
// default. Thread-safe.
int Threads();
void SetThreads(int n);
// Applies Threads() to the calling thread's OpenMP default (oneDNN reads it).
void SyncThreads();

// Calls f(begin, end) on disjoint chunks covering [0, n); chunks hold at
// least `grain` items.
template <typename F>
void ParallelFor(int64_t n, int64_t grain, F f) {
  if (n <= 0) return;
  int64_t chunks = std::min<int64_t>(Threads(), (n + grain - 1) / grain);
  if (chunks <= 1) {
    f(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    f(begin, end);
  }
}

}  // namespace edl::tensor::cpu
