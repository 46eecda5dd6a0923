// The command line as a user meets it: help, version, and one clear line
// plus a non-zero exit for every kind of bad input.
#include <gtest/gtest.h>

#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

const std::string kData = EDL_FASHION_MNIST;
const std::string kTrain = kData + "/train-images-idx3-ubyte.gz";
const std::string kTest = kData + "/t10k-images-idx3-ubyte.gz";

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(Cli, HelpExplainsEveryTrainFlag) {
  RunResult r = RunEdl({"train", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--model_def",
                           "--training_data",
                           "--validation_data",
                           "--num_epochs",
                           "--minibatch_size",
                           "--evaluation_steps",
                           "--checkpoint_steps",
                           "--checkpoint_dir",
                           "--keep_checkpoint_max",
                           "--output",
                           "--distribution_strategy",
                           "--seed",
                           "--num_threads",
                           "--loss",
                           "--optimizer",
                           "--metrics",
                           "--checkpoint_dir_for_init",
                           "--cluster",
                           "--num_workers",
                           "--num_ps_pods",
                           "--num_minibatches_per_task",
                           "--use_async",
                           "--grads_to_wait",
                           "--sync_version_tolerance",
                           "--lr_staleness_modulation",
                           "--get_model_steps",
                           "--relaunch_on_worker_failure",
                           "--grace_period",
                           "--job_name"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

TEST(Cli, TopLevelHelpListsTheCommands) {
  RunResult r = RunEdl({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"train", "evaluate", "predict", "zoo", "version", "master", "ps",
                          "worker", "status", "stop", "scale"}) {
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
  }
}

TEST(Cli, VersionNamesTheEngineAndCuda) {
  RunResult r = RunEdl({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("oneDNN: 2."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ISA in use: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("build: Release"), std::string::npos) << r.out;
}

TEST(Cli, ZooListsTheBuiltInModelsAndShowsTheirSpecs) {
  RunResult list = RunEdl({"zoo", "list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("fashion_mnist_cnn"), std::string::npos);
  EXPECT_NE(list.out.find("fashion_mnist_mlp"), std::string::npos);
  RunResult show = RunEdl({"zoo", "show", "fashion_mnist_cnn"});
  EXPECT_EQ(show.exit_code, 0);
  EXPECT_NE(show.out.find("Conv2D"), std::string::npos);
  RunResult missing = RunEdl({"zoo", "show", "nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope"), std::string::npos);
}

struct BadCase {
  std::vector<std::string> args;
  int exit_code;
  std::string message;  // must appear in stderr
};

class CliRejects : public ::testing::TestWithParam<BadCase> {};

// `flag_and_value` given to an AllreduceStrategy job.
BadCase RefusedByAllreduce(const std::string& flag_and_value) {
  const std::string flag = flag_and_value.substr(0, flag_and_value.find('='));
  return BadCase{
      {"train", "--distribution_strategy=AllreduceStrategy", "--model_def=zoo:fashion_mnist_mlp",
       "--training_data=" + kTrain, "--jobs_dir=/tmp/edl-cli-test", flag_and_value},
      2,
      flag + " does not apply to --distribution_strategy=AllreduceStrategy"};
}

TEST_P(CliRejects, WithOneClearLineAndNonZeroExit) {
  const BadCase& c = GetParam();
  RunResult r = RunEdl(c.args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_LE(Lines(r.err), 2) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, CliRejects,
    ::testing::Values(
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp"},
                2,
                "--training_data is required"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--num_epochs=0"},
                2,
                "--num_epochs"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--minibatch_size=abc"},
                2,
                "--minibatch_size"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--no_such_flag=1"},
                2,
                "--no_such_flag"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--log_level=LOUD"},
                2,
                "--log_level"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--distribution_strategy=Magic"},
                2,
                "--distribution_strategy"},
        BadCase{{"frobnicate"}, 2, "frobnicate"},
        // The default strategy runs a job: its master checks the same inputs.
        BadCase{{"train", "--model_def=/nonexistent/model.json", "--training_data=" + kTrain,
                 "--jobs_dir=/tmp/edl-cli-test"},
                1,
                "/nonexistent/model.json"},
        BadCase{{"train", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=/nonexistent/train-images-idx3-ubyte.gz",
                 "--jobs_dir=/tmp/edl-cli-test"},
                1,
                "--training_data"},
        BadCase{{"evaluate", "--model_def=zoo:fashion_mnist_mlp", "--validation_data=" + kTrain,
                 "--distribution_strategy=AllreduceStrategy"},
                2,
                "AllreduceStrategy trains only"},
        // AllreduceStrategy has no PS: flags that only a PS job uses are
        // refused when given, before any job exists.
        RefusedByAllreduce("--num_ps_pods=2"), RefusedByAllreduce("--use_async=false"),
        RefusedByAllreduce("--grads_to_wait=2"), RefusedByAllreduce("--sync_version_tolerance=1"),
        RefusedByAllreduce("--lr_staleness_modulation=true"),
        RefusedByAllreduce("--get_model_steps=4"),
        RefusedByAllreduce("--num_minibatches_per_task=4"),
        RefusedByAllreduce("--gradient_compression=bf16"),
        BadCase{{"train", "--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
                 "--jobs_dir=/tmp/edl-cli-test", "--gradient_compression=int8"},
                2,
                "--gradient_compression"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain,
                 "--optimizer={\"class_name\": \"Adam\", \"config\": "
                 "{\"gradient_accumulation_steps\": 4}}"},
                1,
                "gradient_accumulation_steps: is not supported (got 4)"},
        BadCase{{"status", "no_such_job", "--jobs_dir=/tmp/edl-cli-test"}, 1, "no_such_job"},
        BadCase{{"scale", "x", "--num_workers=0"}, 2, "--num_workers"},
        BadCase{{"scale", "x", "--num_workers=-3"},
                2,
                "--num_workers: -3 is out of range; it must be between 1 and 1000"},
        BadCase{{"train", "--num_epochs=abc"}, 2, "--num_epochs: \"abc\" is not a number"},
        BadCase{{"train", "--num_epochs=-1"},
                2,
                "--num_epochs: -1 is too small; it must be at least 0"},
        BadCase{{"train", "--minibatch_size=1.5"},
                2,
                "--minibatch_size: \"1.5\" is not a whole number"},
        BadCase{{"train", "--cluster=moon"}, 2, "--cluster: \"moon\" is not one of local, kube"},
        BadCase{{"status", "x", "--format=yaml"}, 2, "--format: \"yaml\" is not one of json, text"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--checkpoint_steps=10"},
                1,
                "--checkpoint_steps needs --checkpoint_dir"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--evaluation_steps=10"},
                1,
                "--evaluation_steps needs --validation_data"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain,
                 "--optimizer={\"class_name\": \"SGD\", \"config\": []}", "--learning_rate=0.1"},
                1,
                "\"config\" must be an object"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=/nonexistent/model.json",
                 "--training_data=" + kTrain},
                1,
                "/nonexistent/model.json"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:no_such_model",
                 "--training_data=" + kTrain},
                1,
                "no_such_model"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=/nonexistent/train-images-idx3-ubyte.gz"},
                1,
                "--training_data"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--optimizer=adamw_turbo"},
                1,
                "--optimizer"},
        BadCase{{"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                 "--training_data=" + kTrain, "--loss=hinge_of_doom"},
                1,
                "--loss"},
        BadCase{{"evaluate", "--model_def=zoo:fashion_mnist_mlp", "--validation_data=" + kTest,
                 "--checkpoint_dir_for_init=/nonexistent/ckpt"},
                1,
                "--checkpoint_dir_for_init"},
        BadCase{{"predict", "--model_def=zoo:fashion_mnist_mlp", "--prediction_data=" + kTest},
                2,
                "--output"}));

}  // namespace
}  // namespace edl::testing
