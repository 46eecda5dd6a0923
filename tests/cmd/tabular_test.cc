// Tabular training end to end: the zoo's DeepFM, Wide & Deep and DCN on CSV
// data planted from a known logistic model must learn close to the planted
// model's own AUC, and
// a small Keras MLP learns iris from Debian's sklearn CSV.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

#include "data/planted_model.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

double Metric(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("(^|[ :])" + name + " ([0-9.eE+-]+)"))) return -1;
  return std::stod(m[2]);
}

// The CTR models of the zoo (DeepFM, Wide & Deep, DCN) on the same data.
class PlantedCtr : public ::testing::TestWithParam<std::string> {};

TEST_P(PlantedCtr, LearnsCloseToThePlantedModelsAuc) {
  TempDir dir;
  data::PlantedOptions o;
  o.num_rows = 100000;
  o.interaction_std = 0.5;
  o.row_seed = 1;
  auto train = data::WritePlantedCsv(dir.File("train.csv"), o);
  ASSERT_TRUE(train.ok()) << train.status().message();
  o.num_rows = 10000;
  o.row_seed = 2;  // same planted model, fresh rows
  auto valid = data::WritePlantedCsv(dir.File("valid.csv"), o);
  ASSERT_TRUE(valid.ok()) << valid.status().message();

  RunResult r = RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:" + GetParam(),
                        "--training_data=" + dir.File("train.csv"),
                        "--validation_data=" + dir.File("valid.csv"), "--num_epochs=3",
                        "--minibatch_size=128", "--num_threads=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double learned = Metric(r.out, "val_auc");
  EXPECT_GE(learned, valid->planted_auc - 0.03) << "planted AUC " << valid->planted_auc << "\n"
                                                << r.out;
  EXPECT_LE(learned, valid->planted_auc + 0.01) << r.out;  // cannot beat the truth by much
  std::printf("%s: planted AUC %.4f, learned %.4f\n", GetParam().c_str(), valid->planted_auc,
              learned);
}

INSTANTIATE_TEST_SUITE_P(Zoo, PlantedCtr,
                         ::testing::Values("planted_deepfm", "wide_and_deep", "dcn"));

// A data set of many files: four training shards by glob, validation as a
// comma-separated list; a PS job trains every record of every shard once.
TEST(Tabular, APsJobTrainsADataSetOfShardsByGlobEveryRecordOnce) {
  TempDir dir;
  data::PlantedOptions o;
  o.num_rows = 5000;
  o.interaction_std = 0.5;
  double planted_auc = 0;
  for (int shard = 0; shard < 4; ++shard) {
    o.row_seed = 10 + shard;
    auto part = data::WritePlantedCsv(dir.File("train-" + std::to_string(shard) + ".csv"), o);
    ASSERT_TRUE(part.ok()) << part.status().message();
  }
  o.num_rows = 2500;
  for (int shard = 0; shard < 2; ++shard) {
    o.row_seed = 20 + shard;
    auto part = data::WritePlantedCsv(dir.File("valid-" + std::to_string(shard) + ".csv"), o);
    ASSERT_TRUE(part.ok()) << part.status().message();
    planted_auc = part->planted_auc;
  }
  RunResult r =
      RunEdl({"train", "--job_name=shards", "--jobs_dir=" + dir.path(),
              "--model_def=zoo:planted_deepfm", "--training_data=" + dir.File("train-*.csv"),
              "--validation_data=" + dir.File("valid-0.csv") + "," + dir.File("valid-1.csv"),
              "--num_epochs=2", "--minibatch_size=128", "--num_workers=2", "--num_ps_pods=1",
              "--grace_period=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("20000 training, 5000 validation records"), std::string::npos) << r.err;
  for (int epoch = 1; epoch <= 2; ++epoch) {
    EXPECT_NE(r.out.find("epoch " + std::to_string(epoch) +
                         ": 20000/20000 records trained, 0 missing, 0 trained twice"),
              std::string::npos)
        << r.out;
  }
  EXPECT_GE(Metric(r.out, "auc"), planted_auc - 0.08) << "planted " << planted_auc << "\n" << r.out;
}

TEST(Tabular, KerasMlpLearnsIrisFromSklearnCsv) {
  TempDir dir;
  WriteText(dir.File("iris.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "iris", "layers": [
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}},
      {"class_name": "Dense", "config": {"name": "hidden", "units": 16, "activation": "relu"}},
      {"class_name": "Dense", "config": {"name": "out", "units": 3}}]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
    "metrics": ["accuracy"],
    "input": {"format": "csv", "skip_rows": 1, "header": false}
  })");
  const std::string iris = std::string(EDL_SKLEARN_DATA) + "/iris.csv";
  RunResult r = RunEdl({"train", "--distribution_strategy=Local",
                        "--model_def=" + dir.File("iris.json"), "--training_data=" + iris,
                        "--validation_data=" + iris, "--num_epochs=60", "--minibatch_size=16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(Metric(r.out, "val_accuracy"), 0.9) << r.out;
}

TEST(Tabular, MalformedModelSpecNamesTheFileAndLayer) {
  TempDir dir;
  WriteText(dir.File("bad.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}},
      {"class_name": "Dense", "config": {"name": "hidden", "units": "many"}}]}},
    "loss": "mse"})");
  const std::string iris = std::string(EDL_SKLEARN_DATA) + "/iris.csv";
  RunResult r = RunEdl({"train", "--distribution_strategy=Local",
                        "--model_def=" + dir.File("bad.json"), "--training_data=" + iris});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hidden"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("units"), std::string::npos) << r.err;

  WriteText(dir.File("broken.json"), "{\"model\": [1, 2,");
  RunResult b = RunEdl({"train", "--distribution_strategy=Local",
                        "--model_def=" + dir.File("broken.json"), "--training_data=" + iris});
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("broken.json"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("line 1"), std::string::npos) << b.err;
}

TEST(Tabular, IdsBeyondAnEmbeddingTableAreRejectedBeforeTraining) {
  TempDir dir;
  data::PlantedOptions o;
  o.num_rows = 200;
  ASSERT_TRUE(data::WritePlantedCsv(dir.File("train.csv"), o).ok());
  // The zoo DeepFM's table has 32 + 256 + 2048 rows; hash c2 into 4096.
  RunResult show = RunEdl({"zoo", "show", "planted_deepfm"});
  ASSERT_EQ(show.exit_code, 0);
  std::string spec = show.out;
  const std::string from = "\"hash_buckets\": 2048";
  ASSERT_NE(spec.find(from), std::string::npos) << spec;
  spec.replace(spec.find(from), from.size(), "\"hash_buckets\": 4096");
  WriteText(dir.File("spec.json"), spec);
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=" + dir.File("spec.json"),
              "--training_data=" + dir.File("train.csv")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("has ids up to 4383 but Embedding"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

TEST(Tabular, LabelsOutsideTheModelsClassesAreAClearError) {
  TempDir dir;
  // Iris has classes 0..2; this model has only 2 outputs.
  WriteText(dir.File("two.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "two", "layers": [
      {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}},
      {"class_name": "Dense", "config": {"name": "out", "units": 2}}]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "input": {"format": "csv", "skip_rows": 1, "header": false}
  })");
  const std::string iris = std::string(EDL_SKLEARN_DATA) + "/iris.csv";
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=" + dir.File("two.json"),
              "--training_data=" + iris, "--minibatch_size=150"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("iris.csv: label 2 is not a class id of the model's 2 outputs"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("expected 0..1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace edl::testing
