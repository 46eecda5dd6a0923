// Progress: how far a distributed job is, as the master's progress lines and
// bar show it (MasterCore::progress(), roles/job/job_progress.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edl::roles::master {

struct Progress {
  int epoch = 0;                // the newest training epoch handed out
  int64_t records_trained = 0;  // record trainings over all epochs
  int64_t model_version = 0;
  size_t workers = 0;  // registered and alive
  // Sums of the training reports this master received (not kept across a
  // restart): their losses (each a task's loss summed over its samples)
  // and samples. A window's mean loss is the ratio of two differences.
  double train_loss_sum = 0;
  int64_t train_samples = 0;
};

// The progress when the last training task of an epoch was reported
// (MasterCore::epoch_ends()), for the TensorBoard point at the epoch's end.
struct EpochEnd {
  int epoch = 0;      // the epoch that ended
  double at_s = 0;    // the master's Clock, in seconds
  Progress progress;  // as MasterCore::progress() answered then
};

}  // namespace edl::roles::master
