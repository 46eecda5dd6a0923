#include "roles/job/job_progress.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace edl::roles::job {
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<std::string> bars;
  JobProgress::Sink Sink() {
    return [this](const std::string& text, bool bar) { (bar ? bars : lines).push_back(text); };
  }
};

master::Progress Status(int64_t records) {
  master::Progress p;
  p.epoch = 1;
  p.model_version = 7;
  p.records_trained = records;
  p.workers = 2;
  return p;
}

TEST(JobProgress, WritesAPlainLineEveryLogInterval) {
  Collected c;
  JobProgress p(1000, 2, /*bar=*/false, /*line_interval_s=*/3, c.Sink());
  int64_t records = 0;
  auto status = [&] { return Status(records); };
  for (int i = 0; i <= 40; ++i) {  // every 0.25 s for 10 s
    const double t = i * 0.25;
    records = static_cast<int64_t>(t * 50);
    p.Report(status, t);
  }
  ASSERT_EQ(c.lines.size(), 3u);  // at 3, 6 and 9 s
  EXPECT_TRUE(c.bars.empty());
  EXPECT_EQ(c.lines[0].rfind("progress: epoch 1/2, ", 0), 0u) << c.lines[0];
  EXPECT_NE(c.lines[0].find("/1000 records"), std::string::npos) << c.lines[0];
  EXPECT_NE(c.lines[0].find("50 samples/s, 2 workers"), std::string::npos) << c.lines[0];
}

TEST(JobProgress, RedrawsABarTwiceASecondAndRemovesItAtTheEnd) {
  Collected c;
  JobProgress p(1000, 1, /*bar=*/true, /*line_interval_s=*/10, c.Sink());
  for (int i = 0; i <= 8; ++i) p.Report([] { return Status(500); }, i * 0.25);
  EXPECT_EQ(c.bars.size(), 4u);  // at 0.5, 1, 1.5 and 2 s
  EXPECT_TRUE(c.lines.empty());
  EXPECT_NE(c.bars[0].find("[============>           ]  50%"), std::string::npos) << c.bars[0];
  p.Finish();
  EXPECT_EQ(c.bars.back(), "");
}

}  // namespace
}  // namespace edl::roles::job
