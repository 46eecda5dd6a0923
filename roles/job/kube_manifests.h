// Private to roles/job/kube_*.cc: the objects the client creates for a job
// on Kubernetes (Secret, ConfigMap, the master's batch/v1 Job and its
// Service), as JSON. BuildKubeJobManifests (roles/job/kube_job.h) is their
// text.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::roles::job {

struct MasterProcessOptions;

// Whether `path` is a regular file on this machine: a --model_def that is
// one travels in the job's ConfigMap (model.json).
bool IsLocalFile(const std::string& path);

// The job's Secret (holding `secret`), ConfigMap (the master's arguments as
// the pod sees them, and `model_spec_text` as model.json unless it is ""),
// master Job and master Service, in that order. Errors name the flag.
Result<std::vector<nlohmann::json>> KubeJobObjects(const MasterProcessOptions& m,
                                                   const std::string& secret,
                                                   const std::string& model_spec_text);

}  // namespace edl::roles::job
