// Private to roles/job/kube_*.cc: what the client checks of a job for
// Kubernetes before it creates anything (edl train|evaluate|predict
// --cluster=kube), so that a bad flag, model spec or data set fails here
// and not in a pod.
#pragma once

#include <string>

#include "base/status.h"

namespace edl::roles::job {

struct MasterProcessOptions;

// Checks the names, the Kubernetes flags (resources, volumes, envs, pod
// priorities), the model spec (compiled here when it is a file or a zoo
// model) and the data this machine sees (each against the model; data it
// does not see must lie on a --volume). Warns of outputs that no volume
// holds. Returns the model spec's text when --model_def is a file here (it
// travels in the job's ConfigMap), else ""; errors name the flag.
Result<std::string> ValidateKubeJob(const MasterProcessOptions& m);

}  // namespace edl::roles::job
