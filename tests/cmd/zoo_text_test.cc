// The zoo's text models (imdb_bilstm, transformer_encoder) train through the
// real binary on generated variable-length id sequences padded with 0
// (before or after the words), with a planted rule.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

constexpr int kSteps = 80;

// Reviews of 8..kSteps words: ids 1..50 are "good", 51..100 "bad", the rest
// (101..1000) neutral; the label is whether good words outnumber bad ones.
// Near ties are left out. Half are padded after the words, half before.
std::string Reviews(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string csv;
  for (int t = 0; t < kSteps; ++t) csv += "t" + std::to_string(t) + ",";
  csv += "label\n";
  for (int i = 0; i < n; ++i) {
    const int length = 8 + static_cast<int>(rng() % (kSteps - 7));
    std::vector<int> words;
    int good = 0, bad = 0;
    while (static_cast<int>(words.size()) < length) {
      const uint32_t kind = rng() % 10;
      const int id = kind == 0   ? 1 + static_cast<int>(rng() % 50)
                     : kind == 1 ? 51 + static_cast<int>(rng() % 50)
                                 : 101 + static_cast<int>(rng() % 900);
      good += id <= 50;
      bad += id > 50 && id <= 100;
      words.push_back(id);
    }
    if (std::abs(good - bad) < 2) continue;  // no near ties
    std::vector<int> row(kSteps, 0);
    const int offset = i % 2 == 0 ? 0 : kSteps - length;
    for (int k = 0; k < length; ++k) row[offset + k] = words[k];
    for (int v : row) csv += std::to_string(v) + ",";
    csv += good > bad ? "1\n" : "0\n";
  }
  return csv;
}

class ZooText : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooText, LearnsAPlantedRuleOnPaddedSequences) {
  TempDir dir;
  WriteText(dir.File("train.csv"), Reviews(3000, 1));
  WriteText(dir.File("test.csv"), Reviews(400, 2));
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:" + GetParam(),
              "--training_data=" + dir.File("train.csv"),
              "--validation_data=" + dir.File("test.csv"), "--minibatch_size=32", "--num_epochs=6",
              // The masked steps are many small ops: one thread, so
              // that a parallel test cannot stall a thread team.
              "--num_threads=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Held-out reviews; the majority class is about 0.5.
  const double accuracy = Metric(r.out, "val_binary_accuracy");
  EXPECT_GE(accuracy, 0.85) << r.out;
  std::printf("%s: held-out binary accuracy %.4f\n", GetParam().c_str(), accuracy);
}

INSTANTIATE_TEST_SUITE_P(TextModels, ZooText,
                         ::testing::Values("imdb_bilstm", "transformer_encoder"));

}  // namespace
}  // namespace edl::testing
