// The `edl ps` process: one parameter server of a distributed job, serving
// its partition over RPC until SIGTERM. With --checkpoint_dir it writes its
// partition when the master asks (kPsSaveCheckpointPath: the job's final
// checkpoint) and again on SIGTERM unless that version is saved already; a
// failed write on SIGTERM exits non-zero, naming the reason.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "roles/job/process_options.h"

namespace edl::roles::job {

Status RunPsProcess(const PsProcessOptions& options);

// The PS's control RPC (empty body): writes its partition of the current
// version now; answers the partition's path, or the error.
inline constexpr char kPsSaveCheckpointPath[] = "/edl.PsControl/SaveCheckpoint";

// The job's final checkpoint: asks every PS (host:port each, in PS order)
// to write its partition of the current version; the first failure, named
// "final checkpoint: ps-<i>: <why>".
Status SaveFinalCheckpoints(const std::vector<std::string>& ps_addrs, const std::string& secret);

// Whether `path` is a single-process checkpoint (local training, an --output
// export), which CompileModel can restore (it carries the model spec), as
// opposed to the PS layout of a distributed job's --checkpoint_dir.
bool IsSingleProcessCheckpoint(const std::string& path);

// The job secret from options.secret_file or <job_dir>/secret.
Result<std::string> LoadSecret(const JobAccess& job);

}  // namespace edl::roles::job
