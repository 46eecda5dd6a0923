// MasterOptions: every knob of the master's core logic (docs/distributed.md), filled
// by cmd/ from flags and passed down. ValidateMasterOptions() names the
// offending field so a bad job fails before anything starts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/metrics/metric.h"
#include "roles/master/prediction_collector.h"

namespace edl::roles::master {

// Records in each data set; 0 when the job has none.
struct DatasetSizes {
  int64_t training = 0;
  int64_t validation = 0;
  int64_t prediction = 0;
  // Records per file of a data set of several files (empty: one file); no
  // task spans two files (roles/master/task_cuts.h).
  std::vector<int64_t> training_files;
  std::vector<int64_t> validation_files;
  std::vector<int64_t> prediction_files;
};

// Fresh metric objects for one evaluation round (same configuration as the
// workers'); CompiledModel::MakeMetrics fits.
using MetricsFactory = std::function<Result<std::vector<std::unique_ptr<nn::metrics::Metric>>>()>;

struct MasterOptions {
  std::string job_name = "edl";
  DatasetSizes records;
  // A task covers minibatch_size * num_minibatches_per_task records (the last
  // task of a data set is shorter).
  int64_t minibatch_size = 64;
  int64_t num_minibatches_per_task = 8;
  int num_epochs = 1;  // >= 1
  // > 0: evaluate every `evaluation_steps` model versions;
  // 0: after every epoch (as the local trainer); < 0: only once at the end.
  // Every training job with validation data ends with a final evaluation.
  int64_t evaluation_steps = 0;
  // A task not reported within this time goes back to the queue. Long is fine:
  // heartbeats detect dead workers much sooner.
  double lease_timeout_s = 600;
  // A worker silent (no heartbeat, no call) this long is declared dead.
  double heartbeat_timeout_s = 2;
  // Failed reports of one task before the job fails (poison data).
  int max_task_failures = 3;
  // Times one task may be lost with its worker (death, expired lease) before
  // the job fails (records that crash the worker); 0 = unlimited.
  int max_task_losses = 5;
  // Seeds the epoch's task order (epoch e from seed + e) and each task's
  // record order.
  uint64_t seed = 0;
  // false: training tasks in record order (see DispatcherOptions::shuffle).
  bool shuffle = true;
  // Workers wanted (scale); 0 = every worker that registers.
  int target_workers = 0;
  // AllreduceStrategy: no task is handed out until this many workers are in
  // the ring, or ring_start_timeout_s after the master started, so the
  // first steps run at full size (0: no wait). Later joiners never wait.
  int ring_start_members = 0;
  double ring_start_timeout_s = 120;
  // The PS's periodic checkpoints (every checkpoint_steps versions; 0 =
  // none): the job fails when none has succeeded for this many intervals
  // (MasterCore::OnCheckpointHealth; 0 = never).
  int64_t checkpoint_steps = 0;
  int max_failed_checkpoint_intervals = 3;
  // Builds evaluation metrics; unset: evaluation reports only the loss.
  MetricsFactory make_metrics;
  // Keeps each prediction task's outputs as it is accepted (called under
  // the core's lock); unset: they are counted and dropped.
  PredictionSink store_predictions;

  // Where the master keeps its durable state (docs/distributed.md, 'A master
  // that survives its own death'): a journal of every change plus compacted
  // snapshots (roles/master/journal.h). A master that finds state there
  // continues that job. "" keeps it in memory only.
  std::string state_dir;
  // false skips every fsync (tests and benchmarks of the rest).
  bool durable_state = true;
  // A snapshot is written once the journal since the last one holds this
  // many bytes and at least as many as that snapshot took.
  uint64_t snapshot_min_bytes = uint64_t{16} << 20;
  // Called after the state directory changed, before the change counts as
  // durable (Journal::SetOnWrite): a copy kept elsewhere is updated.
  std::function<Status()> after_state_write;
};

// InvalidArgument naming the field, e.g. "master: minibatch_size must be > 0,
// got 0".
Status ValidateMasterOptions(const MasterOptions& options);

}  // namespace edl::roles::master
