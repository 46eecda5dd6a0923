// Private to roles/job/kube_*.cc: following a submitted job on Kubernetes
// until its master Job ends, for `edl train --cluster=kube` (not detached).
// KubeWaitJob (roles/job/kube_job.h) waits for the same end without the log.
#pragma once

#include <cstdio>
#include <string>

#include "base/status.h"

namespace edl::kube {
class Client;
}

namespace edl::roles::job {

// Follows the job's master: waits for its pod to start, streams its log to
// `out`, and when a master pod ends while the Job goes on (the Job
// controller replaces it), the next one's. OK when the Job completed; an
// error naming the master pod's fate when it failed, or the Job was
// deleted. An API server that fails for a while (a few minutes) is waited
// out, and a log stream it cut is resumed from where it broke.
Status FollowKubeJob(kube::Client& client, const std::string& ns, const std::string& job,
                     FILE* out);

}  // namespace edl::roles::job
