// End-to-end local training through the real binary on real Fashion-MNIST:
// accuracy, checkpoints, resume, export, evaluate and predict agreeing with
// each other, reproducibility, and bad data files.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/tensorboard/tfevents_reader.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {
namespace fs = std::filesystem;

const std::string kData = EDL_FASHION_MNIST;
const std::string kTrain = kData + "/train-images-idx3-ubyte.gz";
const std::string kTest = kData + "/t10k-images-idx3-ubyte.gz";

// The value after `name ` in a "final: ..." or "evaluation: ..." line.
double Metric(const std::string& text, const std::string& name) {
  std::smatch m;
  std::regex re("(^|[ :])" + name + " ([0-9.eE+-]+)");
  if (!std::regex_search(text, m, re)) return -1;
  return std::stod(m[2]);
}

TEST(Train, MlpReachesEightyPercentOnFashionMnistInOneEpoch) {
  RunResult r = RunEdl({"train", "--distribution_strategy=Local",
                        "--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
                        "--validation_data=" + kTest, "--num_epochs=1", "--num_threads=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double acc = Metric(r.out, "val_accuracy");
  EXPECT_GE(acc, 0.80) << r.out;
  EXPECT_LE(acc, 1.0) << r.out;
  // Progress is reported as plain lines when not on a terminal, and the
  // final metrics come on one line.
  EXPECT_NE(r.err.find("epoch 1/1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  EXPECT_NE(r.out.find("final: loss "), std::string::npos) << r.out;
}

TEST(Train, WritesTensorBoardScalarsThatAnIndependentReaderReadsBack) {
  TempDir dir;
  const std::string tb = dir.File("tb/run1");  // created with its parent
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
              "--training_data=" + kTrain, "--validation_data=" + kTest, "--num_epochs=1",
              "--num_threads=2", "--evaluation_steps=400", "--tensorboard_log_dir=" + tb});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto files = ReadEventFiles(tb);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].error, "");
  EXPECT_EQ(files[0].file_version, "brain.Event:2");
  // Training scalars at least at the epoch's end (938 steps), steps rising.
  auto loss = PointsOf(files, "train/loss");
  ASSERT_FALSE(loss.empty());
  EXPECT_EQ(loss.back().step, 938);
  for (size_t i = 1; i < loss.size(); ++i) EXPECT_GT(loss[i].step, loss[i - 1].step);
  EXPECT_GT(loss.back().value, 0.1f);
  EXPECT_LT(loss.back().value, 1.0f);
  EXPECT_NEAR(loss.back().value, Metric(r.out, "loss"), 1e-3) << r.out;  // the epoch's mean
  EXPECT_EQ(PointsOf(files, "train/accuracy").size(), loss.size());
  // The zoo MLP's Adam rate is cosine-decayed from 1e-3 to 1e-4 over 1,876
  // steps: the scalar follows the schedule at each point's step.
  auto lr = PointsOf(files, "train/learning_rate");
  ASSERT_EQ(lr.size(), loss.size());
  for (const auto& p : lr) {
    EXPECT_NEAR(p.value, 1e-3 * (0.45 * (1 + std::cos(M_PI * p.step / 1876.0)) + 0.1), 1e-7)
        << "step " << p.step;
  }
  EXPECT_NEAR(lr.back().value, 0.00055, 1e-7);
  for (const auto& p : PointsOf(files, "train/samples_per_second")) EXPECT_GT(p.value, 100);
  // Evaluations at versions 400 and 800 and after the epoch.
  auto acc = PointsOf(files, "validation/accuracy");
  ASSERT_EQ(acc.size(), 3u);
  EXPECT_EQ(acc[0].step, 400);
  EXPECT_EQ(acc[1].step, 800);
  EXPECT_EQ(acc[2].step, 938);
  EXPECT_NEAR(acc[2].value, Metric(r.out, "val_accuracy"), 1e-4) << r.out;
  EXPECT_EQ(PointsOf(files, "validation/loss").size(), 3u);
  for (size_t i = 1; i < files[0].scalars.size(); ++i) {
    EXPECT_GE(files[0].scalars[i].wall_time, files[0].scalars[i - 1].wall_time);
  }
}

TEST(Train, AnUnwritableTensorBoardDirectoryFailsBeforeTraining) {
  TempDir dir;
  { std::ofstream(dir.File("file")) << "not a directory"; }
  for (const char* strategy : {"Local", "ParameterServerStrategy"}) {
    RunResult r = RunEdl({"train", std::string("--distribution_strategy=") + strategy,
                          "--jobs_dir=" + dir.path(), "--model_def=zoo:fashion_mnist_mlp",
                          "--training_data=" + kTrain, "--num_epochs=1",
                          "--tensorboard_log_dir=" + dir.File("file/tb")});
    EXPECT_NE(r.exit_code, 0) << strategy;
    EXPECT_NE(r.err.find("--tensorboard_log_dir " + dir.File("file/tb")), std::string::npos)
        << strategy << ": " << r.err;
    EXPECT_EQ(r.out.find("final:"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("epoch 1"), std::string::npos) << r.err;
  }
}

TEST(Train, CheckpointsPruneResumeAndEvaluateFromTheCheckpointAlone) {
  TempDir dir;
  const std::string ckpt = dir.File("ckpt");
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
              "--training_data=" + kTrain, "--max_step=50", "--checkpoint_dir=" + ckpt,
              "--checkpoint_steps=20", "--keep_checkpoint_max=2", "--num_threads=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(ckpt + "/version-20"));
  EXPECT_TRUE(fs::exists(ckpt + "/version-40/manifest.json"));
  EXPECT_TRUE(fs::exists(ckpt + "/version-50/manifest.json"));

  // The checkpoint carries the model spec: no --model_def needed.
  RunResult e =
      RunEdl({"evaluate", "--checkpoint_dir_for_init=" + ckpt, "--validation_data=" + kTest});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_GT(Metric(e.out, "accuracy"), 0.5) << e.out;

  // Resuming continues from the checkpoint's version; --max_step counts the
  // model's steps, so the same command after a crash finishes the job.
  RunResult resumed = RunEdl({"train", "--distribution_strategy=Local",
                              "--checkpoint_dir_for_init=" + ckpt, "--training_data=" + kTrain,
                              "--max_step=60", "--checkpoint_dir=" + ckpt, "--num_threads=2"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(fs::exists(ckpt + "/version-60/manifest.json")) << resumed.err;
  EXPECT_NE(resumed.out.find("(10 steps,"), std::string::npos) << resumed.out;
}

TEST(Train, ResumingFromAMidEpochCheckpointMatchesAnUninterruptedRun) {
  TempDir dir;
  auto val_loss = [](const RunResult& r) { return Metric(r.out, "val_loss"); };
  const std::vector<std::string> common = {"--model_def=zoo:fashion_mnist_mlp",
                                           "--training_data=" + kTest,
                                           "--validation_data=" + kTest,
                                           "--num_threads=1",
                                           "--seed=3",
                                           "--num_epochs=2"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"train", "--distribution_strategy=Local"};
    args.insert(args.end(), common.begin(), common.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return RunEdl(args);
  };
  // 157 steps per epoch: stop inside the second epoch, then resume.
  RunResult straight = with({"--max_step=250"});
  RunResult first = with({"--max_step=200", "--checkpoint_dir=" + dir.File("c")});
  RunResult rest = with({"--max_step=250", "--checkpoint_dir_for_init=" + dir.File("c")});
  ASSERT_EQ(straight.exit_code, 0) << straight.err;
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_GT(val_loss(straight), 0);
  EXPECT_EQ(val_loss(rest), val_loss(straight)) << rest.out << straight.out;
  EXPECT_NE(val_loss(first), val_loss(straight));
}

TEST(Train, EvaluatingAfterTrainingWithAnotherOptimizerNeedsNoSlots) {
  TempDir dir;
  const std::string out = dir.File("sgd");
  ASSERT_EQ(RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                    "--training_data=" + kTest, "--max_step=20", "--output=" + out,
                    "--optimizer={\"class_name\": \"SGD\", \"config\": {\"momentum\": 0.9}}"})
                .exit_code,
            0);
  // The zoo spec says Adam; evaluation restores weights only.
  RunResult e = RunEdl({"evaluate", "--model_def=zoo:fashion_mnist_mlp",
                        "--checkpoint_dir_for_init=" + out, "--validation_data=" + kTest});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  // Fine-tuning with Adam from the SGD checkpoint starts Adam's state afresh.
  RunResult t =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
              "--checkpoint_dir_for_init=" + out, "--training_data=" + kTest, "--max_step=30"});
  EXPECT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.err.find("starts its optimizer state afresh"), std::string::npos) << t.err;
}

TEST(Train, OutputRefusesToReplaceSomethingThatIsNotAnExport) {
  TempDir dir;
  WriteText(dir.File("precious.txt"), "keep me");
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
              "--training_data=" + kTest, "--max_step=2", "--output=" + dir.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not an edl export"), std::string::npos) << r.err;
  EXPECT_EQ(ReadText(dir.File("precious.txt")), "keep me");
  // An existing export is replaced.
  const std::string out = dir.File("model");
  for (int i = 0; i < 2; ++i) {
    RunResult ok =
        RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                "--training_data=" + kTest, "--max_step=2", "--output=" + out});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
  }
}

TEST(Train, ExportedModelEvaluatesAndPredictsConsistently) {
  TempDir dir;
  const std::string out = dir.File("model");
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
              "--training_data=" + kTrain, "--validation_data=" + kTest, "--max_step=200",
              "--output=" + out, "--num_threads=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(out + "/model.json"));
  ASSERT_TRUE(fs::exists(out + "/weights.bin"));
  const double trained = Metric(r.out, "val_accuracy");

  RunResult from_ckpt =
      RunEdl({"evaluate", "--checkpoint_dir_for_init=" + out, "--validation_data=" + kTest});
  ASSERT_EQ(from_ckpt.exit_code, 0) << from_ckpt.err;
  // The TF.js export has no training config of ours: the loss comes by flag.
  RunResult from_tfjs = RunEdl({"evaluate", "--model_def=" + out + "/model.json",
                                "--loss={\"class_name\": \"SparseCategoricalCrossentropy\", "
                                "\"config\": {\"from_logits\": true}}",
                                "--metrics=accuracy", "--validation_data=" + kTest});
  ASSERT_EQ(from_tfjs.exit_code, 0) << from_tfjs.err;
  EXPECT_NEAR(Metric(from_ckpt.out, "accuracy"), trained, 1e-4) << from_ckpt.out << r.out;
  EXPECT_NEAR(Metric(from_tfjs.out, "accuracy"), trained, 1e-4) << from_tfjs.out;

  const std::string csv = dir.File("pred.csv");
  RunResult p = RunEdl({"predict", "--model_def=" + out + "/model.json",
                        "--prediction_data=" + kTest, "--output=" + csv});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::string text = ReadText(csv);
  int lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 10001);
  EXPECT_NE(text.substr(0, text.find('\n')).find(",class"), std::string::npos);
}

TEST(Predict, AcceptsACsvOfFlattenedInputs) {
  TempDir dir;
  const std::string out = dir.File("model");
  ASSERT_EQ(RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                    "--training_data=" + kTrain, "--max_step=5", "--output=" + out})
                .exit_code,
            0);
  std::string csv;
  for (int j = 0; j < 784; ++j) csv += (j ? ",p" : "p") + std::to_string(j);
  csv += "\n";
  for (int row = 0; row < 3; ++row) {
    for (int j = 0; j < 784; ++j) csv += (j ? "," : "") + std::to_string((row * 7 + j) % 10 / 10.0);
    csv += "\n";
  }
  WriteText(dir.File("in.csv"), csv);
  RunResult p =
      RunEdl({"predict", "--checkpoint_dir_for_init=" + out,
              "--prediction_data=" + dir.File("in.csv"), "--output=" + dir.File("p.csv")});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::string text = ReadText(dir.File("p.csv"));
  int lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 4) << text;

  csv += "1,2,3\n";  // a short row
  WriteText(dir.File("bad.csv"), csv);
  RunResult bad =
      RunEdl({"predict", "--checkpoint_dir_for_init=" + out,
              "--prediction_data=" + dir.File("bad.csv"), "--output=" + dir.File("bad_out.csv")});
  EXPECT_EQ(bad.exit_code, 1);
  // Streamed: the row and its byte offset are named; nothing is left behind.
  EXPECT_NE(bad.err.find("bad.csv: row 5 (byte "), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("expected 784 fields, got 3"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir.File("bad_out.csv")));
  for (const auto& e : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find("bad_out.csv"), std::string::npos) << e.path();
  }
}

TEST(Train, SameSeedGivesTheSameRun) {
  auto run = [] {
    return RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_cnn",
                   "--training_data=" + kTest, "--max_step=8", "--seed=7", "--num_threads=1"});
  };
  RunResult a = run(), b = run();
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(Metric(a.out, "loss"), Metric(b.out, "loss"));
  EXPECT_GT(Metric(a.out, "loss"), 0);
}

TEST(Train, LossesAndMetricsThatDoNotFitTheLabelsAreClearErrors) {
  for (const auto& [flag, message] : std::vector<std::pair<std::string, std::string>>{
           {"--metrics=auc", "metric auc needs one prediction per label value"},
           {"--loss=mse", "loss mean_squared_error needs one label value per prediction"},
           {"--loss=categorical_crossentropy", "class ids need sparse_categorical_crossentropy"}}) {
    RunResult r =
        RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                "--training_data=" + kTest, "--max_step=2", flag});
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_NE(r.err.find(message), std::string::npos) << flag << ": " << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

TEST(Train, RejectsATruncatedIdxFileNamingIt) {
  TempDir dir;
  // Copy the first 5,000 bytes of the (decompressed) test images and the
  // labels file beside it.
  gzFile in = gzopen(kTest.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::string bytes(5000, '\0');
  ASSERT_EQ(gzread(in, bytes.data(), 5000), 5000);
  gzclose(in);
  const std::string images = dir.File("t10k-images-idx3-ubyte");
  WriteText(images, bytes);
  fs::copy_file(kData + "/t10k-labels-idx1-ubyte.gz", dir.File("t10k-labels-idx1-ubyte.gz"));
  RunResult r = RunEdl({"train", "--distribution_strategy=Local",
                        "--model_def=zoo:fashion_mnist_mlp", "--training_data=" + images});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("t10k-images-idx3-ubyte"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace edl::testing
