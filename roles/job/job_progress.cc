#include "roles/job/job_progress.h"

#include <algorithm>
#include <cstdio>

#include "base/logging.h"
#include "roles/progress.h"

namespace edl::roles::job {

JobProgress::JobProgress(double total_records, int num_epochs, bool bar, double line_interval_s,
                         Sink sink)
    : total_records_(total_records),
      num_epochs_(num_epochs),
      bar_(bar),
      line_interval_s_(line_interval_s > 0 ? line_interval_s : 10),
      sink_(std::move(sink)) {
  if (!sink_) {
    sink_ = [](const std::string& text, bool bar) {
      if (bar) {
        SetStderrStatusLine(text);
      } else {
        EDL_LOG(INFO) << text;
      }
    };
  }
}

std::string JobProgress::Format(int epoch, int64_t records, int64_t model_version, double rate,
                                size_t workers, bool bar) const {
  const double fraction = total_records_ > 0 ? std::clamp(records / total_records_, 0.0, 1.0) : 0.0;
  const std::string eta =
      rate > 0 ? FormatDuration((total_records_ - static_cast<double>(records)) / rate) : "?";
  char line[320];
  if (bar) {
    constexpr int kWidth = 24;
    std::string cells(kWidth, ' ');
    const int filled = static_cast<int>(fraction * kWidth);
    for (int i = 0; i < filled; ++i) cells[i] = '=';
    if (filled < kWidth) cells[filled] = '>';
    std::snprintf(line, sizeof line,
                  "epoch %d/%d [%s] %3.0f%% %lld/%.0f records, model version %lld, "
                  "%.0f samples/s, %zu workers, ETA %s",
                  epoch, num_epochs_, cells.c_str(), 100 * fraction,
                  static_cast<long long>(records), total_records_,
                  static_cast<long long>(model_version), rate, workers, eta.c_str());
  } else {
    std::snprintf(line, sizeof line,
                  "progress: epoch %d/%d, %lld/%.0f records (%.0f%%), model version %lld, "
                  "%.0f samples/s, %zu workers, ETA %s",
                  epoch, num_epochs_, static_cast<long long>(records), total_records_,
                  100 * fraction, static_cast<long long>(model_version), rate, workers,
                  eta.c_str());
  }
  return line;
}

void JobProgress::Report(const std::function<master::Progress()>& progress, double now_s) {
  if (window_start_s_ < 0) {
    window_start_s_ = now_s;
    last_draw_s_ = now_s;
    return;
  }
  const double interval = bar_ ? 0.5 : line_interval_s_;
  if (now_s - last_draw_s_ < interval) return;
  const master::Progress p = progress();
  const int64_t records = p.records_trained;
  // The rate over the last few seconds (a line: since the last line).
  const double window = now_s - window_start_s_;
  if (window > 0 && (window >= 5 || !bar_)) {
    rate_ = static_cast<double>(records - window_records_) / window;
    window_start_s_ = now_s;
    window_records_ = records;
  }
  const std::string text = Format(p.epoch, records, p.model_version, rate_, p.workers, bar_);
  sink_(text, bar_);
  last_draw_s_ = now_s;
}

void JobProgress::Finish() {
  if (bar_ && last_draw_s_ >= 0) sink_("", true);
}

}  // namespace edl::roles::job
