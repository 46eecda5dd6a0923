// The Kubernetes flags of a job in ElasticDL's syntax, parsed and checked
// before anything is created (docs/kubernetes.md): resources
// ("cpu=1,memory=4096Mi,gpu=1"), volumes ("claim_name=c,mount_path=/p;
// host_path=/h,mount_path=/q"), worker priorities ("high", "low", a class
// name, or a fraction such as 0.5: that share of the workers get class
// "high", the rest "low") and extra environment ("K=V,K2=V2").
// Every error names the flag and the offending part.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace edl::roles::cluster {

// Resource name -> quantity. "gpu" becomes "nvidia.com/gpu"; cpu is a
// number or millicores ("500m"); memory, disk and ephemeral-storage are
// integers with an optional E/P/T/G/M/K[i] suffix; any "<vendor>/<name>"
// is a whole number.
using ResourceList = std::map<std::string, std::string>;
Result<ResourceList> ParseResources(const std::string& flag, const std::string& text);
// The cores a cpu quantity of a ParseResources list names ("2", "1.5",
// "500m" -> 0.5).
double CpuCores(const std::string& quantity);

struct VolumeSpec {
  std::string name;            // "volume-0", "volume-1", ... (pod-local)
  std::string claim_name;      // a PersistentVolumeClaim, or
  std::string host_path;       // a path on the node
  std::string host_path_type;  // hostPath type ("" = unchecked, "Directory", ...)
  std::string mount_path;      // absolute path in the container
  std::string sub_path;
};
Result<std::vector<VolumeSpec>> ParseVolumes(const std::string& flag, const std::string& text);
// Whether `path` lies under one of the volumes' mount paths.
bool OnVolume(const std::string& path, const std::vector<VolumeSpec>& volumes);

// The PriorityClass of each of `num_workers` workers (index order).
// "" -> none; a class name -> all; a fraction f in [0, 1] -> ceil(n*f)
// workers get "high", given to indices 0, n-1, 1, n-2, ... (ElasticDL's
// order, so the high ones survive scale-downs from either end), the rest
// "low".
Result<std::vector<std::string>> WorkerPriorities(const std::string& flag, const std::string& text,
                                                  int num_workers);

// "K=V,K2=V2"; a piece without '=' continues the previous value (values
// may hold commas, as in ElasticDL).
Result<std::vector<std::pair<std::string, std::string>>> ParseEnvs(const std::string& flag,
                                                                   const std::string& text);

// A Kubernetes object name part (DNS-1123 label): lower-case letters,
// digits and '-', starting and ending alphanumeric, at most `max_length`.
Status CheckDnsLabel(const std::string& what, const std::string& name, size_t max_length = 63);

}  // namespace edl::roles::cluster
