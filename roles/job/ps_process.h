// The `edl ps` process: one parameter server of a distributed job, serving
// its partition over RPC until SIGTERM (it then writes a final checkpoint if
// the job checkpoints, and exits 0).
#pragma once

#include "base/status.h"
#include "roles/job/process_options.h"

namespace edl::roles::job {

Status RunPsProcess(const PsProcessOptions& options);

// Whether `path` is a single-process checkpoint (local training, an --output
// export), which CompileModel can restore (it carries the model spec), as
// opposed to the PS layout of a distributed job's --checkpoint_dir.
bool IsSingleProcessCheckpoint(const std::string& path);

// The job secret from options.secret_file or <job_dir>/secret.
Result<std::string> LoadSecret(const JobAccess& job);

}  // namespace edl::roles::job
