// ProgressReporter: tells a person how long work is going: on a terminal, a
// bar redrawn in place (epoch, step, samples/s, loss, ETA); otherwise (logs,
// pipes, CI) a plain progress line every `line_interval_s` seconds.
// Not thread-safe: one training loop drives it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"

namespace edl::roles {

struct Progress {
  int epoch = 0;  // 1-based
  int num_epochs = 0;
  int64_t step = 0;  // steps done in this epoch
  int64_t steps_per_epoch = 0;
  int64_t global_step = 0;  // steps done in the whole job
  int64_t total_steps = 0;  // steps the whole job will take
  int64_t samples = 0;      // samples done in this epoch
  double loss = 0;          // running mean over this epoch
  std::vector<std::pair<std::string, double>> metrics;
};

class ProgressReporter {
 public:
  ProgressReporter(std::FILE* out, bool terminal, const Clock& clock,
                   double line_interval_s = 10.0);

  // Call at the start of each epoch, then after every step.
  void StartEpoch();
  void Update(const Progress& p);
  // Ends the bar's line (terminal) so later output starts on a new line.
  void EndEpoch(const Progress& p);

  // "epoch 1/3 [=====>    ] 412/938 2,850 samples/s loss 0.4123 ETA 0:12".
  std::string Format(const Progress& p, bool bar) const;
  double SamplesPerSecond(const Progress& p) const;

 private:
  std::FILE* out_;
  bool terminal_;
  const Clock& clock_;
  double line_interval_s_;
  double epoch_start_ = 0;
  double job_start_ = -1;
  int64_t job_start_step_ = 0;
  double last_draw_ = -1e9;
};

// "1:02:03" / "2:03".
std::string FormatDuration(double seconds);

}  // namespace edl::roles
