// JobEvents: a distributed job's scalars, kept by its master in bounded
// series for GET /series (roles/summary/scalar_series.h) and, with
// --tensorboard_log_dir, written to a TensorBoard event file
// (roles/summary/event_file.h). At most once a second, and for the end of every
// training epoch (written with the next update, at the version the epoch
// ended at), it adds at the model version as the step:
//   train/loss                 mean loss of the training reports since the
//                              last point (each task's loss over its samples)
//   train/samples_per_second   records trained since the last point / time
//   train/learning_rate        the optimizer's rate at that version
//   job/workers                workers registered and alive
// and, for every evaluation that finished since, validation/loss and
// validation/<metric> at the evaluated version. A master that takes over
// a job starts a new file in the same directory and writes only the epoch
// ends and evaluations that happen after it started.
// Not thread-safe: the master's loop drives it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "roles/master/evaluation_aggregator.h"
#include "roles/master/progress.h"
#include "roles/summary/event_file.h"
#include "roles/summary/scalar_series.h"

namespace edl::nn::optim {
class Optimizer;
}

namespace edl::roles::job {

class JobEvents {
 public:
  // `dir` "" keeps the series only. `optimizer` (may be null: no learning
  // rate) is used for its schedule only; `now` is steady seconds. Errors
  // name --tensorboard_log_dir.
  static Result<std::unique_ptr<JobEvents>> Open(const std::string& dir,
                                                 nn::optim::Optimizer* optimizer,
                                                 const master::Progress& start,
                                                 size_t evaluations_done, double now);

  // Whether a second passed since the last Update.
  bool Due(double now) const { return now - last_time_ >= 1.0; }
  // Adds the evaluations not added yet; a point at each epoch end not added
  // yet that `p` includes (the window from the point before to the epoch's
  // end); then a point for the window up to `p`, unless nothing moved since
  // the epoch end just added. `epoch_ends` are all this master's, read no
  // earlier than `p` (one that `p` does not include waits for the next
  // Update). A failed write of the event file is logged once and ends the
  // file; the series and training go on.
  void Update(const master::Progress& p, const std::vector<master::EvaluationRecord>& evaluations,
              const std::vector<master::EpochEnd>& epoch_ends, double now);

  // The series (GET /series). Thread-safe.
  const summary::ScalarSeries& series() const { return series_; }

 private:
  JobEvents(std::unique_ptr<summary::EventFileWriter> file, nn::optim::Optimizer* optimizer,
            const master::Progress& start, size_t evaluations_done, double now);
  void Write(int64_t step, const summary::Scalars& scalars);
  // The training point for the window from last_ to `p` at `now`.
  void WriteTraining(const master::Progress& p, double now);

  std::unique_ptr<summary::EventFileWriter> file_;  // null: no --tensorboard_log_dir
  summary::ScalarSeries series_;
  nn::optim::Optimizer* optimizer_;
  master::Progress last_;
  size_t evaluations_done_;
  size_t epoch_ends_done_ = 0;
  double last_time_;
};

}  // namespace edl::roles::job
