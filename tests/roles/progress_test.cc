#include "roles/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace edl::roles {
namespace {

std::string Captured(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

Progress At(int64_t step) {
  Progress p;
  p.epoch = 1;
  p.num_epochs = 2;
  p.step = step;
  p.steps_per_epoch = 100;
  p.global_step = step;
  p.total_steps = 200;
  p.samples = step * 64;
  p.loss = 0.5;
  p.metrics = {{"accuracy", 0.75}};
  return p;
}

TEST(ProgressReporter, FormatsRateLossMetricsAndEta) {
  FakeClock clock;
  ProgressReporter r(stderr, false, clock);
  r.StartEpoch();
  clock.AdvanceSeconds(10);
  // 50 steps of 64 samples in 10 s; 150 steps left at 0.2 s each.
  std::string line = r.Format(At(50), false);
  EXPECT_EQ(line, "epoch 1/2 50/100 320 samples/s loss 0.5000 accuracy 0.7500 ETA 0:30");
}

TEST(ProgressReporter, DrawsABarProportionalToTheStep) {
  FakeClock clock;
  ProgressReporter r(stderr, true, clock);
  r.StartEpoch();
  EXPECT_NE(r.Format(At(50), true).find("[============>           ]"), std::string::npos)
      << r.Format(At(50), true);
}

TEST(ProgressReporter, PrintsPlainLinesOnlyEveryInterval) {
  FakeClock clock;
  std::FILE* f = std::tmpfile();
  ProgressReporter r(f, false, clock, 10.0);
  r.StartEpoch();
  for (int step = 1; step <= 30; ++step) {
    clock.AdvanceSeconds(1);
    r.Update(At(step));
  }
  std::string out = Captured(f);
  int lines = 0;
  for (char c : out) lines += c == '\n';
  EXPECT_EQ(lines, 3) << out;  // at 10 s, 20 s and 30 s
  EXPECT_EQ(out.find('\r'), std::string::npos);
  std::fclose(f);
}

TEST(FormatDuration, UsesHoursOnlyWhenNeeded) {
  EXPECT_EQ(FormatDuration(62), "1:02");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
}

}  // namespace
}  // namespace edl::roles
