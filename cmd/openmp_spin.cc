#include "cmd/openmp_spin.h"

#include <unistd.h>

#include <cstdlib>

#include "base/cpus.h"

namespace edl::cmd {

void ExecWithShortOpenMpSpins(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) {
    return;
  }
  if (!CgroupCpuQuota()) return;
  if (::setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  ::unsetenv("GOMP_SPINCOUNT");  // no /proc: run as we are
}

}  // namespace edl::cmd
