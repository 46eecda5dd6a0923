// The newer layers train in every strategy: one functional model of
// Subtract, Average, Maximum, Minimum, Dot (cosine), Conv1D (causal),
// AveragePooling1D, MaxPooling1D, GlobalMaxPooling1D, GlobalAveragePooling1D,
// CategoryEncoding (of the truncated features), SpatialDropout2D, Rescaling, ZeroPadding2D,
// Conv2DTranspose, UpSampling2D, Cropping2D, RepeatVector, SpatialDropout1D, GaussianNoise,
// GaussianDropout, AlphaDropout, LeakyReLU, PReLU, ELU, ThresholdedReLU, LSTM,
// GRU (backwards, with recurrent dropout), SimpleRNN, RNN over stacked cells,
// TimeDistributed and
// Bidirectional, DepthwiseConv2D, SeparableConv2D, Conv2D with groups, Permute,
// MultiHeadAttention, Conv3D, Conv3DTranspose, MaxPooling3D, AveragePooling3D,
// GlobalMaxPooling3D, GlobalAveragePooling3D, Resizing, CenterCrop and
// two nested models (a Sequential that trains, a frozen functional one with
// batch normalization) learns iris (Debian's sklearn CSV) locally, with a PS and
// with allreduce, judged on a fifth of the rows held out from training.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

// inputs: layer names, "name@k" for node k.
std::string Node(const std::string& cls, const std::string& name, const std::string& config,
                 const std::vector<std::string>& inputs) {
  std::string nodes;
  for (const std::string& in : inputs) {
    const size_t at = in.find('@');
    const std::string layer = in.substr(0, at);
    const std::string node = at == std::string::npos ? "0" : in.substr(at + 1);
    nodes += (nodes.empty() ? "[\"" : ", [\"") + layer + "\", " + node + ", 0, {}]";
  }
  return R"({"class_name": ")" + cls + R"(", "name": ")" + name + R"(", "config": {"name": ")" +
         name + "\"" + (config.empty() ? "" : ", " + config) + "}, \"inbound_nodes\": [[" + nodes +
         "]]}";
}

std::string MixedModel() {
  const std::vector<std::string> ab = {"da", "db"};
  const std::vector<std::string> layers = {
      R"({"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4]}, "inbound_nodes": []})",
      Node("Rescaling", "scaled", R"("scale": 0.5, "offset": -1.0)", {"x"}),
      Node("Dense", "da", R"("units": 8)", {"scaled"}),
      Node("Dense", "db", R"("units": 8)", {"scaled"}),
      Node("Subtract", "sub", "", ab),
      Node("Average", "avg", "", ab),
      Node("Maximum", "max", "", ab),
      Node("Minimum", "min", "", ab),
      Node("Dot", "cos", R"("axes": 1, "normalize": true)", ab),
      Node("Reshape", "steps", R"("target_shape": [4, 1])", {"x"}),
      Node("SpatialDropout1D", "drop_steps", R"("rate": 0.1)", {"steps"}),
      Node("Conv1D", "conv", R"("filters": 4, "kernel_size": 2, "padding": "causal")",
           {"drop_steps"}),
      Node("AveragePooling1D", "pool", R"("pool_size": 2, "padding": "same")", {"conv"}),
      Node("GlobalMaxPooling1D", "gmax", "", {"pool"}),
      Node("MaxPooling1D", "mpool", R"("pool_size": 2)", {"conv"}),
      Node("GlobalAveragePooling1D", "gavg", "", {"mpool"}),
      // Iris' features truncate to ids below 8.
      Node("CategoryEncoding", "bag", R"("num_tokens": 8, "output_mode": "multi_hot")", {"x"}),
      Node("LSTM", "lstm", R"("units": 4, "return_sequences": true)", {"steps"}),
      Node("GRU", "gru", R"("units": 3, "go_backwards": true, "recurrent_dropout": 0.1)", {"lstm"}),
      Node("SimpleRNN", "rnn", R"("units": 2, "activation": "relu")", {"steps"}),
      Node(
          "RNN", "cells",
          R"("cell": {"class_name": "StackedRNNCells", "config": {"cells": [{"class_name": "LSTMCell", "config": {"units": 3}}, {"class_name": "SimpleRNNCell", "config": {"units": 2}}]}}, "go_backwards": true)",
          {"steps"}),
      Node("MultiHeadAttention", "attend", R"("num_heads": 2, "key_dim": 2)", {"steps", "steps"}),
      Node("Flatten", "attended", "", {"attend"}),
      Node("Permute", "swapped", R"("dims": [2, 1])", {"steps"}),
      Node("Flatten", "swapped_flat", "", {"swapped"}),
      Node("TimeDistributed", "per_step",
           R"("layer": {"class_name": "Dense", "config": {"name": "d", "units": 3}})", {"steps"}),
      Node(
          "Bidirectional", "bi",
          R"("merge_mode": "sum", "layer": {"class_name": "LSTM", "config": {"name": "l", "units": 2}})",
          {"per_step"}),
      Node("Reshape", "image", R"("target_shape": [2, 2, 1])", {"scaled"}),
      Node("ZeroPadding2D", "pad", R"("padding": 1)", {"image"}),
      Node("Resizing", "resized", R"("height": 3, "width": 3)", {"image"}),
      Node("CenterCrop", "center", R"("height": 2, "width": 2)", {"resized"}),
      Node("Flatten", "center_flat", "", {"center"}),
      Node("SpatialDropout2D", "drop_image", R"("rate": 0.1)", {"pad"}),
      Node("DepthwiseConv2D", "dw", R"("kernel_size": 2, "depth_multiplier": 2, "padding": "same")",
           {"drop_image"}),
      Node("SeparableConv2D", "sep", R"("filters": 2, "kernel_size": 2)", {"dw"}),
      Node("Conv2D", "grouped", R"("filters": 2, "kernel_size": 1, "groups": 2)", {"sep"}),
      Node("GlobalAveragePooling2D", "gap", "", {"grouped"}),
      Node("Conv2DTranspose", "deconv",
           R"("filters": 2, "kernel_size": 2, "strides": 2, "padding": "same")", {"pad"}),
      Node("UpSampling2D", "up", R"("size": 2)", {"deconv"}),
      Node("Cropping2D", "crop", R"("cropping": [[1, 1], [2, 0]])", {"up"}),
      Node("Flatten", "pixels", "", {"crop"}),
      Node("Reshape", "volume", R"("target_shape": [1, 2, 2, 1])", {"scaled"}),
      Node("Conv3D", "vconv", R"("filters": 3, "kernel_size": 2, "padding": "same")", {"volume"}),
      Node("MaxPooling3D", "vmax", R"("pool_size": [1, 2, 2], "strides": 1, "padding": "same")",
           {"vconv"}),
      Node("AveragePooling3D", "vavg", R"("pool_size": 2, "strides": 1, "padding": "same")",
           {"vmax"}),
      Node("GlobalAveragePooling3D", "vgap", "", {"vavg"}),
      Node("GlobalMaxPooling3D", "vgmax", "", {"vconv"}),
      Node("Conv3DTranspose", "vdeconv", R"("filters": 2, "kernel_size": 2, "strides": [1, 2, 1])",
           {"volume"}),
      Node("GlobalMaxPooling3D", "voxels", "", {"vdeconv"}),
      Node(
          "Sequential", "tower",
          R"("layers": [{"class_name": "Dense", "config": {"name": "t1", "units": 4, "activation": "tanh"}}, {"class_name": "Dense", "config": {"name": "t2", "units": 3}}])",
          {"scaled"}),
      Node(
          "Functional", "frozen",
          R"("trainable": false, "layers": [{"class_name": "InputLayer", "name": "f_in", "config": {"name": "f_in", "batch_input_shape": [null, 4]}, "inbound_nodes": []}, )" +
              Node("Dense", "f1", R"("units": 3)", {"f_in"}) + ", " +
              Node("BatchNormalization", "f_bn", "", {"f1"}) +
              R"(], "input_layers": [["f_in", 0, 0]], "output_layers": [["f_bn", 0, 0]])",
          {"scaled"}),
      Node("Concatenate", "cat", "",
           {"sub",    "avg",         "max",   "min",          "cos",      "gmax",   "gru",  "rnn",
            "cells",  "bi",          "gap",   "swapped_flat", "attended", "pixels", "vgap", "vgmax",
            "voxels", "center_flat", "tower", "frozen@1",     "gavg",     "bag"}),
      Node("GaussianNoise", "noisy", R"("stddev": 0.05)", {"cat"}),
      Node("LeakyReLU", "leaky", R"("alpha": 0.1)", {"noisy"}),
      Node("Dense", "h", R"("units": 8)", {"leaky"}),
      Node("RepeatVector", "twice", R"("n": 2)", {"h"}),
      Node("Flatten", "flat", "", {"twice"}),
      Node("PReLU", "prelu", "", {"flat"}),
      Node("ELU", "elu", "", {"prelu"}),
      Node("ThresholdedReLU", "thr", R"("theta": 0.0)", {"elu"}),
      Node("GaussianDropout", "gdrop", R"("rate": 0.05)", {"thr"}),
      Node("AlphaDropout", "adrop", R"("rate": 0.05)", {"gdrop"}),
      // A skip around the chain of activations: with ThresholdedReLU(theta 0)
      // in it, an initialization that leaves every unit negative would
      // otherwise stop all gradients.
      Node("Concatenate", "skip", "", {"adrop", "h"}),
      Node("Dense", "out", R"("units": 3)", {"skip"}),
  };
  std::string list;
  for (const std::string& l : layers) list += (list.empty() ? "" : ",\n") + l;
  return R"({"model": {"class_name": "Functional", "config": {"name": "mixed", "layers": [)" +
         list +
         R"(], "input_layers": [["x", 0, 0]], "output_layers": [["out", 0, 0]]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
    "metrics": ["accuracy"],
    "input": {"format": "csv", "skip_rows": 1, "header": false}})";
}

class MixedLayers : public ::testing::TestWithParam<std::string> {};

// Splits iris.csv into `train` (4 rows of every 5) and `held_out` (the
// fifth: 30 rows, 10 of each class, as the file lists the classes in
// turn), each starting with the file's header line. Returns the number of
// held-out rows.
int SplitIris(const std::string& train, const std::string& held_out) {
  std::istringstream lines(ReadText(std::string(EDL_SKLEARN_DATA) + "/iris.csv"));
  std::string header, line, train_text, held_text;
  std::getline(lines, header);
  int held = 0;
  for (int i = 0; std::getline(lines, line); ++i) {
    if (line.empty()) continue;
    if (i % 5 == 4) {
      held_text += line + "\n";
      ++held;
    } else {
      train_text += line + "\n";
    }
  }
  WriteText(train, header + "\n" + train_text);
  WriteText(held_out, header + "\n" + held_text);
  return held;
}

TEST_P(MixedLayers, LearnIris) {
  TempDir dir;
  WriteText(dir.File("mixed.json"), MixedModel());
  // Validated on rows it never trained on.
  ASSERT_EQ(SplitIris(dir.File("train.csv"), dir.File("held_out.csv")), 30);
  const std::string strategy = GetParam();
  std::vector<std::string> args = {
      "train", "--distribution_strategy=" + strategy, "--model_def=" + dir.File("mixed.json"),
      "--training_data=" + dir.File("train.csv"), "--validation_data=" + dir.File("held_out.csv"),
      "--num_epochs=60", "--minibatch_size=16",
      // Many tiny ops: one thread each, so that ctest's
      // parallel tests do not stall its thread team.
      "--num_threads=1"};
  if (strategy != "Local") {
    args.insert(args.end(), {"--job_name=mixed", "--jobs_dir=" + dir.path(), "--num_workers=2",
                             "--grace_period=5"});
  }
  if (strategy == "ParameterServerStrategy") args.push_back("--num_ps_pods=1");
  RunResult r = RunEdl(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The held-out accuracy: the local run's final val_accuracy, a job's last
  // evaluation.
  std::string evaluated = r.out;
  if (strategy != "Local") {
    const size_t last = r.out.rfind("evaluation at version ");
    ASSERT_NE(last, std::string::npos) << r.out;
    evaluated = r.out.substr(last, r.out.find('\n', last) - last);
  }
  const double accuracy = Metric(evaluated, strategy == "Local" ? "val_accuracy" : "accuracy");
  // The job's log too (its end): an asynchronous job's rare miss is
  // otherwise left with nothing to read.
  const size_t kLogTail = 8000;
  // 30 held-out rows, 10 per class; versicolor and virginica overlap, so a
  // miss or three is expected (0.90 to 1.00 in these runs; chance is 0.33).
  EXPECT_GE(accuracy, 0.85) << r.out << "\n--- the end of the job's log ---\n"
                            << r.err.substr(r.err.size() > kLogTail ? r.err.size() - kLogTail : 0);
  if (strategy != "Local") {
    EXPECT_EQ(EpochsTrainedExactlyOnce(r.out), 60) << r.out;
  }
  std::printf("%s: accuracy %.4f\n", strategy.c_str(), accuracy);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, MixedLayers,
                         ::testing::Values("Local", "ParameterServerStrategy",
                                           "AllreduceStrategy"));

}  // namespace
}  // namespace edl::testing
