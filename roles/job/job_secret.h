// The job secret: the token every RPC of a distributed job carries
// (net/rpc.h), which the master, the PS and the workers each load at start.
// Plain functions; safe to call from any process.
#pragma once

#include <string>

#include "base/status.h"

namespace edl::roles::job {

struct JobAccess;

// The secret from job.secret_file (errors prefixed "--secret_file"), else
// from <job.job_dir>/secret; InvalidArgument when neither is given.
Result<std::string> LoadSecret(const JobAccess& job);

}  // namespace edl::roles::job
