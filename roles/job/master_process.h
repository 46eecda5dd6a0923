// The `edl master` process of a job on the local cluster: serves the master
// RPC service and the status API on one port, launches the PS processes and
// then the workers through a Supervisor over LocalCluster (relaunching them by
// the relaunch policy and telling MasterCore when one dies), follows scale and
// stop requests, and at the end writes the final model (pulled from the PS)
// to --output, prints the data ledger and the last metrics, and stops every
// process. Returns OK when the job succeeded, the failure reason otherwise.
#pragma once

#include "base/status.h"
#include "roles/job/process_options.h"

namespace edl::roles::job {

Status RunMasterProcess(const MasterProcessOptions& options);

// The exit code of a master that leaves the job to a new master, its
// processes still running: it could no longer write its state, or (a master
// pod with durable state) it was asked to stop by SIGTERM: evicted, drained,
// deleted. The job host, or the master's Job (which does not count it as a
// failure), starts the new one.
inline constexpr int kMasterLeavesExitCode = 75;

}  // namespace edl::roles::job
