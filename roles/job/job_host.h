// The local job host (docs/distributed.md, 'A master that survives its own
// death'): what `edl train --cluster=local` runs for a distributed job. It is
// the parent of every process of the job: it starts the master
// (`edl master`, with its output on this terminal) and, at the master's
// request over a Unix socket (roles/cluster/hosted_cluster.h), the PS and
// workers. A master that dies (killed by a signal: kill -9, the OOM killer;
// or exiting with kMasterLeavesExitCode) is started again with the same
// flags; it recovers the job's state from the job directory, adopts the
// running PS and workers and goes on, and they never notice more than a
// pause. A master that exits otherwise ended the job: the host stops what
// is left and returns the master's exit code.
//
// SIGINT/SIGTERM to the host are passed to the master, which stops the job
// gracefully. If the host itself is killed, the kernel kills the master and
// every process of the job (PR_SET_PDEATHSIG): nothing is left behind.
#pragma once

#include "roles/job/process_options.h"

namespace edl::roles::job {

// How many times the host starts a new master for one job.
inline constexpr int kMaxMasterRestarts = 20;

// Runs the job; returns the exit code for `edl train`. `m.binary` is the
// edl executable.
int RunJobHost(MasterProcessOptions m);

}  // namespace edl::roles::job
