#include "roles/cluster/cluster.h"

namespace edl::roles::cluster {

std::string ProcessExit::ToString() const {
  std::string s = name + " (incarnation " + std::to_string(incarnation) + ") ";
  if (oom_killed)
    s += "was OOMKilled";
  else if (disrupted)
    s += "was taken away by the cluster";
  else if (signaled)
    s += "killed by signal " + std::to_string(code);
  else
    s += "exited with code " + std::to_string(code);
  if (!detail.empty()) s += ": " + detail;
  return s;
}

}  // namespace edl::roles::cluster
