// The `edl worker` process: one worker of a distributed job. Exits 0 when
// the master says the job is done or after a graceful stop (SIGTERM: the
// current task is handed back), non-zero when the master or a PS stays
// unreachable or its setup fails.
#pragma once

#include "base/status.h"
#include "roles/job/process_options.h"

namespace edl::roles::job {

Status RunWorkerProcess(const WorkerProcessOptions& options);

}  // namespace edl::roles::job
