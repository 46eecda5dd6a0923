#include "tensor/cpu/cpu_backend.h"

#include <atomic>

#include "base/cpus.h"
#include "tensor/cpu/parallel.h"

namespace edl::tensor {

Backend& CpuBackend() {
  static cpu::DnnlBackend* backend = new cpu::DnnlBackend();
  return *backend;
}

namespace cpu {
namespace {
std::atomic<int> num_threads{0};  // 0: OpenMP's default
}  // namespace

int Threads() {
  int n = num_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

void SetThreads(int n) {
  if (n <= 0) n = UsableCpus();  // the affinity mask capped by the cgroup's quota
  num_threads.store(n, std::memory_order_relaxed);
  omp_set_num_threads(n);
}

void SyncThreads() {
  int n = num_threads.load(std::memory_order_relaxed);
  if (n > 0 && omp_get_max_threads() != n) omp_set_num_threads(n);
}

void DnnlBackend::SetNumThreads(int n) { SetThreads(n); }
int DnnlBackend::NumThreads() const { return Threads(); }

}  // namespace cpu
}  // namespace edl::tensor
