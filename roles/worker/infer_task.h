// InferTask: forward passes over an evaluation or prediction task's records
// with the parameters the model holds now (no gradients, inference
// behaviour), filling the task's report: loss sum, samples and metric
// states, or the predictions. Used by the allreduce worker, whose weights
// are local; the PS worker interleaves pulls and has its own loop.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "data/source.h"
#include "roles/local/compiled_model.h"
#include "roles/protocol/messages.h"
#include "roles/protocol/task_name.h"

namespace edl::roles::worker {

using protocol::TaskRangeName;

// Checks the task's range against `source` (InvalidArgument naming it).
Status CheckTaskRange(const protocol::Task& task, const data::Source* source);

Status InferTask(CompiledModel& cm, const data::Source& source, const protocol::Task& task,
                 int64_t batch_size, protocol::ReportTaskRequest* report);

}  // namespace edl::roles::worker
