// The `edl ps` process: one parameter server of a distributed job, serving
// its partition over RPC until SIGTERM. With --checkpoint_dir it writes its
// partition when the master asks (kPsSaveCheckpointPath: the job's final
// checkpoint) and again on SIGTERM unless that version is saved already; a
// failed write on SIGTERM exits non-zero, naming the reason.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "roles/job/process_options.h"
#include "roles/ps/applied_pushes.h"

namespace edl::roles::job {

Status RunPsProcess(const PsProcessOptions& options);

// The PS's control RPC (empty body): writes its partition of the current
// version now; answers the partition's path, or the error.
inline constexpr char kPsSaveCheckpointPath[] = "/edl.PsControl/SaveCheckpoint";

// The PS's named pushes (empty body), for a master that must know what a
// restarted PS lost (docs/distributed.md, 'A PS loss'): JSON
// {"boot": this process's random id, "version": N,
//  "taken": [[task id, count], ...], "settled": [[first, last], ...]}.
inline constexpr char kPsAppliedPushesPath[] = "/edl.PsControl/AppliedPushes";

struct PsApplied {
  std::string boot;  // differs for every PS process: a new one restarted
  int64_t version = 0;
  ps::AppliedPushes::State state;
};
// Asks the PS at `address` (host:port); Unavailable while it is not up,
// InvalidArgument naming the field for a malformed answer.
Result<PsApplied> ReadAppliedPushes(const std::string& address, const std::string& secret,
                                    std::chrono::milliseconds timeout);
// The answer's parser (ReadAppliedPushes), for tests of malformed input.
Result<PsApplied> ParseAppliedPushes(const std::string& json);

// How the PS's periodic checkpoints fare (empty body): JSON
// {"version": N, "last_good_version": G or -1, "failures": F,
//  "failed_version": V or -1, "error": "..."}.
inline constexpr char kPsCheckpointHealthPath[] = "/edl.PsControl/CheckpointHealth";

struct PsCheckpointHealth {
  int64_t version = 0;
  int64_t last_good_version = -1;
  int64_t failures = 0;
  int64_t failed_version = -1;
  std::string error;
};
Result<PsCheckpointHealth> ReadCheckpointHealth(const std::string& address,
                                                const std::string& secret,
                                                std::chrono::milliseconds timeout);
Result<PsCheckpointHealth> ParseCheckpointHealth(const std::string& json);

// The job's final checkpoint: asks every PS (host:port each, in PS order)
// to write its partition of the current version; the first failure, named
// "final checkpoint: ps-<i>: <why>".
Status SaveFinalCheckpoints(const std::vector<std::string>& ps_addrs, const std::string& secret);

}  // namespace edl::roles::job
