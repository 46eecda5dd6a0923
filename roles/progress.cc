#include "roles/progress.h"

#include <cmath>
#include <cstdio>

namespace edl::roles {

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

ProgressReporter::ProgressReporter(std::FILE* out, bool terminal, const Clock& clock,
                                   double line_interval_s)
    : out_(out), terminal_(terminal), clock_(clock), line_interval_s_(line_interval_s) {}

void ProgressReporter::StartEpoch() {
  epoch_start_ = clock_.NowSeconds();
  if (job_start_ < 0) job_start_ = epoch_start_;
  last_draw_ = terminal_ ? -1e9 : epoch_start_;
}

double ProgressReporter::SamplesPerSecond(const Progress& p) const {
  double elapsed = clock_.NowSeconds() - epoch_start_;
  return elapsed > 0 ? static_cast<double>(p.samples) / elapsed : 0.0;
}

std::string ProgressReporter::Format(const Progress& p, bool bar) const {
  std::string s = "epoch " + std::to_string(p.epoch) + "/" + std::to_string(p.num_epochs);
  if (bar) {
    constexpr int kWidth = 24;
    int filled = p.steps_per_epoch > 0 ? static_cast<int>(kWidth * p.step / p.steps_per_epoch) : 0;
    s += " [";
    for (int i = 0; i < kWidth; ++i) {
      s += i < filled ? '=' : (i == filled ? '>' : ' ');
    }
    s += "]";
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, " %lld/%lld %.0f samples/s loss %.4f",
                static_cast<long long>(p.step), static_cast<long long>(p.steps_per_epoch),
                SamplesPerSecond(p), p.loss);
  s += buf;
  for (const auto& [name, value] : p.metrics) {
    std::snprintf(buf, sizeof buf, " %s %.4f", name.c_str(), value);
    s += buf;
  }
  double now = clock_.NowSeconds();
  int64_t done = p.global_step - job_start_step_;
  if (done > 0 && p.total_steps > 0) {
    double per_step = (now - job_start_) / static_cast<double>(done);
    s += " ETA " + FormatDuration(per_step * static_cast<double>(p.total_steps - p.global_step));
  }
  return s;
}

void ProgressReporter::Update(const Progress& p) {
  double now = clock_.NowSeconds();
  if (terminal_) {
    if (now - last_draw_ < 0.1 && p.step != p.steps_per_epoch) return;
    last_draw_ = now;
    std::fprintf(out_, "\r%s\033[K", Format(p, true).c_str());
    std::fflush(out_);
  } else if (now - last_draw_ >= line_interval_s_) {
    last_draw_ = now;
    std::fprintf(out_, "%s\n", Format(p, false).c_str());
    std::fflush(out_);
  }
}

void ProgressReporter::EndEpoch(const Progress& p) {
  if (terminal_) {
    std::fprintf(out_, "\r%s\033[K\n", Format(p, true).c_str());
  } else {
    std::fprintf(out_, "%s\n", Format(p, false).c_str());
  }
  std::fflush(out_);
}

}  // namespace edl::roles
