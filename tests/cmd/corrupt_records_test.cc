// --skip_corrupt_records in a distributed job: records whose TFRecord
// checksum is wrong fail their tasks and then the job, naming the file and
// record; with the flag, the job trains every other record, and its report
// counts the ones it left out.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "data/tf_example.h"
#include "data/tfrecord.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

// 2000 Examples ("x": 4 floats, "label" = x0 > 0) with the payloads of
// records 150, 151 and 1700 damaged.
std::string CorruptTfRecords() {
  std::string bytes;
  for (int i = 0; i < 2000; ++i) {
    std::map<std::string, data::ExampleFeature> e;
    e["x"].kind = data::ExampleFeature::Kind::kFloat;
    e["x"].floats = {static_cast<float>(i % 7) - 3.0f, 0.5f, static_cast<float>(i % 3), 1.0f};
    e["label"].kind = data::ExampleFeature::Kind::kInt64;
    e["label"].ints = {i % 7 > 3 ? 1 : 0};
    std::string frame = data::TfRecordFrame(data::SerializeExample(e));
    if (i == 150 || i == 151 || i == 1700) frame[data::kTfRecordHeader + 2] ^= 0x21;
    bytes += frame;
  }
  return bytes;
}

std::vector<std::string> Job(const TempDir& dir, const std::string& name) {
  return {"train",
          "--job_name=" + name,
          "--jobs_dir=" + dir.path(),
          "--model_def=" + dir.File("model.json"),
          "--training_data=" + dir.File("bad.tfrecord"),
          "--minibatch_size=50",
          "--num_minibatches_per_task=4",
          "--num_workers=2",
          "--num_ps_pods=1",
          "--grace_period=5",
          "--progress_bar=false"};
}

TEST(CorruptRecords, FailTheJobNamingTheRecordUnlessSkippedAndCounted) {
  TempDir dir;
  WriteText(dir.File("bad.tfrecord"), CorruptTfRecords());
  WriteText(dir.File("model.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "tiny", "layers": [
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}},
      {"class_name": "Dense", "config": {"name": "out", "units": 2}}]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.1}},
    "input": {"format": "tfrecord", "label": "label", "numeric": ["x"]}
  })");
  RunResult failed = RunEdl(Job(dir, "strict"));
  EXPECT_NE(failed.exit_code, 0);
  // Whichever damaged record's task runs out of retries first is named.
  EXPECT_TRUE(std::regex_search(
      failed.out,
      std::regex("bad\\.tfrecord: record (150|151|1700) at byte [0-9]+: data checksum mismatch")))
      << failed.out;

  std::vector<std::string> skipping = Job(dir, "skipping");
  skipping.push_back("--skip_corrupt_records");
  RunResult r = RunEdl(skipping);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("corrupt records skipped: 3 "), std::string::npos) << r.out;
  // The ledger counts record ranges: every task was trained exactly once.
  EXPECT_NE(r.out.find("epoch 1: 2000/2000 records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("skipping a corrupt record (--skip_corrupt_records): "), std::string::npos);
}

}  // namespace
}  // namespace edl::testing
