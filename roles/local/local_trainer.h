// LocalTrainer: `--distribution_strategy=Local`: trains a model in this
// process over a training source, with periodic evaluation, checkpoints,
// progress reporting and a final export. Deterministic for a given seed and
// thread count.
#pragma once

#include <cstdio>

#include "base/clock.h"
#include "base/status.h"
#include "roles/job_options.h"
#include "roles/local/evaluation.h"

namespace edl::roles {

struct TrainingSummary {
  int64_t steps = 0;
  int64_t samples = 0;
  double seconds = 0;
  double train_loss = 0;  // mean over the last epoch
  std::vector<std::pair<std::string, double>> train_metrics;
  bool has_validation = false;
  EvaluationResult validation;  // the last evaluation
};

// Runs the whole job. Progress goes to `progress_out` (a bar when
// `terminal`), logs to the log stream. Errors name the flag or file.
Result<TrainingSummary> RunLocalTraining(const TrainOptions& options, std::FILE* progress_out,
                                         bool terminal, const Clock& clock);

// The one-line summary printed at the end of `edl train`.
std::string FormatSummary(const TrainingSummary& s);

}  // namespace edl::roles
