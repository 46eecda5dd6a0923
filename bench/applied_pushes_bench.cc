// applied_pushes_bench: what the effectively-once bookkeeping
// (roles/ps/applied_pushes.h) costs a PS per push, in-process: for each of
// TASKS training tasks of MINIBATCHES pushes, Take every minibatch in order
// then Settle the task, as a PS does for a worker's pushes; ns per push,
// three runs. Compare with a step's time (e.g. the zoo CNN's ~29 ms per step
// with 2 PS + 2 workers, docs/performance.md) for the cost in steps/s.
// Usage: edl_applied_pushes_bench [TASKS=200000] [MINIBATCHES=8]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "roles/ps/applied_pushes.h"

int main(int argc, char** argv) {
  const int64_t tasks = argc > 1 ? std::atoll(argv[1]) : 200000;
  const int64_t per = argc > 2 ? std::atoll(argv[2]) : 8;
  if (tasks <= 0 || per <= 0) {
    std::fprintf(stderr, "usage: edl_applied_pushes_bench [TASKS>0] [MINIBATCHES>0]\n");
    return 2;
  }
  for (int run = 0; run < 3; ++run) {
    edl::roles::ps::AppliedPushes applied;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t task = 1; task <= tasks; ++task) {
      for (int64_t m = 0; m < per; ++m) applied.Take(task, m);
      applied.Settle(task, per);
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    std::printf("run %d: %.1f ns per push (%lld tasks of %lld; %zu settled range(s) left)\n", run,
                ns / static_cast<double>(tasks * per), static_cast<long long>(tasks),
                static_cast<long long>(per), applied.settled_ranges());
  }
  return 0;
}
