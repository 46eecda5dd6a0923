// JobProgress: the master's view of how far a distributed job is: records
// trained of all epochs, samples/s, model version, workers, ETA. On a
// terminal, a bar kept on the last line (log lines scroll above it, see
// base/logging.h); otherwise a plain INFO line every `line_interval_s`.
// One thread (the master's loop) drives it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "roles/master/progress.h"

namespace edl::roles::job {

class JobProgress {
 public:
  // Where the text goes: the bar to SetStderrStatusLine, a line to the log
  // (the default); tests collect it.
  using Sink = std::function<void(const std::string& text, bool bar)>;
  JobProgress(double total_records, int num_epochs, bool bar, double line_interval_s,
              Sink sink = nullptr);

  // Called from the job loop, as often as it likes, with the master's
  // progress (read only when something is due); redraws the bar at most
  // twice a second and writes a line every line_interval_s.
  void Report(const std::function<master::Progress()>& progress, double now_s);
  // Removes the bar so the final report starts on a clean line.
  void Finish();

  // "epoch 2/3 [=====>    ] 45% 81000/180000 records, model version 1266,
  // 2,850 samples/s, 2 workers, ETA 0:35" (bar) or "progress: epoch 2/3,
  // ..." (line). Exposed for tests.
  std::string Format(int epoch, int64_t records, int64_t model_version, double rate, size_t workers,
                     bool bar) const;

 private:
  double total_records_;
  int num_epochs_;
  bool bar_;
  double line_interval_s_;
  Sink sink_;
  double last_draw_s_ = -1;
  double window_start_s_ = -1;
  int64_t window_records_ = 0;
  double rate_ = 0;
};

}  // namespace edl::roles::job
