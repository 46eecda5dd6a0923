// The counting job: an oracle for "each record's gradient is applied exactly
// once per epoch" that shares no code with what it judges. A one-column
// Embedding over the record id, initialised to zeros and trained by SGD with
// learning rate = the minibatch size (32) on a mean absolute error against a
// label far above it, gains exactly 1.0 in a record's row each time that
// record's gradient is applied; after E epochs every row must hold E. The
// rows are read from the TF.js export (model.json's manifest, weights.bin)
// by this code, not by edl's loader.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/testing/run_edl.h"

namespace edl::testing {

inline constexpr int kCountingRecords = 65536;

// DIR/train.csv (record i is "i,1000000") and DIR/counter.json.
void WriteCountingJob(const TempDir& dir, int records = kCountingRecords);
// `edl train` of counting job `name` on the local cluster from
// `training_data`: DIR/counter.json, minibatch 32 (the learning rate the
// model counts with), 32 minibatches a task, 2 workers, `num_ps` PS, the
// export in DIR/out; then `extra`.
std::vector<std::string> CountingJobArgs(const TempDir& dir, const std::string& name,
                                         const std::string& training_data, int epochs, int num_ps,
                                         std::vector<std::string> extra = {});
// How many rows of the exported table hold each value (gtest failures for
// an export that is not the counting model's).
std::map<float, int> RowHistogram(const std::string& export_dir, int records = kCountingRecords);
// "65536 records applied 4.000000 times; ".
std::string Describe(const std::map<float, int>& histogram);

// The pid of a worker of job `job` (under `jobs_dir`) that holds a training
// task now, stopped (SIGSTOP) so that it cannot finish the task between the
// status read and its kill; -1 if none does.
int StopAWorkerHoldingATrainingTask(const std::string& jobs_dir, const std::string& job);

}  // namespace edl::testing
