#include "roles/cluster/cluster.h"

namespace edl::roles::cluster {

std::string ProcessExit::ToString() const {
  std::string s = name + " (incarnation " + std::to_string(incarnation) + ") ";
  if (signaled) return s + "killed by signal " + std::to_string(code);
  return s + "exited with code " + std::to_string(code);
}

}  // namespace edl::roles::cluster
