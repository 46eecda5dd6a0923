// Image files through the real binary: Fashion-MNIST written as PNG class
// folders by PIL (scripts/fashion_mnist_images.py), trained locally and on
// the local cluster (a spec with augmentation layers), exported with its
// class names, predicted from a folder without classes; bad images fail
// the job naming the file, or are skipped and counted.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tests/testing/job_report.h"
#include "tests/testing/paths.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::vector<std::string> kClasses = {"ankle_boot",  "bag",    "coat",  "dress",
                                           "pullover",    "sandal", "shirt", "sneaker",
                                           "t-shirt_top", "trouser"};
const std::string kGray28 = R"({"image": {"size": [28, 28], "channels": 1}})";

// The first `count` records of each split as PNG class folders under dir.
void WriteFolders(const TempDir& dir, int count) {
  const std::string cmd = "/usr/bin/python3 " + SourceDir() + "/scripts/fashion_mnist_images.py " +
                          dir.path() + " --count " + std::to_string(count) + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST(ImageFolders, TrainExportAndPredictFromPngClassFolders) {
  TempDir dir;
  WriteFolders(dir, 3000);
  RunResult r =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
              "--input_spec=" + kGray28, "--training_data=" + dir.File("train"),
              "--validation_data=" + dir.File("test"), "--num_epochs=2", "--num_threads=2",
              "--output=" + dir.File("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(Metric(r.out, "val_accuracy"), 0.7) << r.out;
  // The class names (sorted folder names) travel in the export, for TF.js
  // users and for edl's own later reads.
  const Json tfjs = Json::parse(ReadText(dir.File("out/model.json")));
  EXPECT_EQ(tfjs["userDefinedMetadata"]["edl"]["input"]["image"]["class_names"], Json(kClasses))
      << tfjs["userDefinedMetadata"].dump();
  // A folder without class folders is prediction data: each file's class
  // by name, in the files' name order.
  fs::create_directories(dir.File("new"));
  std::vector<std::string> bags;
  for (const auto& e : fs::directory_iterator(dir.File("test/bag"))) bags.push_back(e.path());
  std::sort(bags.begin(), bags.end());
  for (int i = 0; i < 20; ++i)
    fs::copy_file(bags[i], dir.File("new/" + std::to_string(100 + i) + ".png"));
  RunResult p = RunEdl({"predict", "--checkpoint_dir_for_init=" + dir.File("out"),
                        "--prediction_data=" + dir.File("new"), "--output=" + dir.File("p.csv")});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::istringstream csv(ReadText(dir.File("p.csv")));
  std::string line;
  std::getline(csv, line);
  EXPECT_TRUE(line.ends_with(",class,class_name")) << line;
  int rows = 0, bag = 0;
  while (std::getline(csv, line)) {
    ++rows;
    bag += line.ends_with(",1,bag");
  }
  EXPECT_EQ(rows, 20);
  EXPECT_GE(bag, 15) << ReadText(dir.File("p.csv"));  // bags are the easiest class
  // The same model evaluates the folder it was validated on.
  RunResult e = RunEdl({"evaluate", "--checkpoint_dir_for_init=" + dir.File("out"),
                        "--validation_data=" + dir.File("test")});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NEAR(Metric(e.out, "accuracy"), Metric(r.out, "val_accuracy"), 0.005) << e.out;
  // A folder with two of the classes keeps the model's ids (bag is 1,
  // trouser 9), also when --input_spec is given again.
  for (const char* c : {"bag", "trouser"}) {
    fs::create_directories(dir.File(std::string("two/") + c));
    fs::copy(dir.File(std::string("test/") + c), dir.File(std::string("two/") + c),
             fs::copy_options::recursive);
  }
  RunResult two = RunEdl({"evaluate", "--checkpoint_dir_for_init=" + dir.File("out"),
                          "--input_spec=" + kGray28, "--validation_data=" + dir.File("two")});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_GE(Metric(two.out, "accuracy"), 0.85) << two.out;
  // One file is one record.
  RunResult one =
      RunEdl({"predict", "--checkpoint_dir_for_init=" + dir.File("out"),
              "--prediction_data=" + dir.File("new/100.png"), "--output=" + dir.File("one.csv")});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string one_csv = ReadText(dir.File("one.csv"));
  EXPECT_EQ(std::count(one_csv.begin(), one_csv.end(), '\n'), 2) << one_csv;
}

TEST(ImageFolders, AugmentedCnnTrainsOnTheLocalClusterEveryRecordOnce) {
  TempDir dir;
  WriteFolders(dir, 2000);
  WriteText(dir.File("cnn.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "augmented", "layers": [
      {"class_name": "InputLayer", "config": {"name": "image", "batch_input_shape": [null, 28, 28, 1]}},
      {"class_name": "RandomTranslation", "config": {"name": "shift", "height_factor": 0.05, "width_factor": 0.05, "fill_mode": "constant"}},
      {"class_name": "RandomContrast", "config": {"name": "contrast", "factor": 0.2, "value_range": [0, 1]}},
      {"class_name": "Conv2D", "config": {"name": "conv", "filters": 16, "kernel_size": [3, 3], "activation": "relu"}},
      {"class_name": "MaxPooling2D", "config": {"name": "pool", "pool_size": [2, 2]}},
      {"class_name": "Flatten", "config": {"name": "flat"}},
      {"class_name": "Dense", "config": {"name": "logits", "units": 10}}]}},
    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
    "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.003}},
    "metrics": ["accuracy"],
    "input": {"image": {"size": [28, 28], "channels": 1}}
  })");
  RunResult r = RunEdl(
      {"train", "--model_def=" + dir.File("cnn.json"), "--checkpoint_dir=" + dir.File("ckpt"),
       "--training_data=" + dir.File("train"), "--validation_data=" + dir.File("test"),
       "--num_epochs=2", "--num_workers=2", "--num_ps_pods=1", "--minibatch_size=32",
       "--num_minibatches_per_task=8", "--progress_bar=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("epoch 2: 2000/2000 records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.6) << r.out;
  // The PS's checkpoints keep the class names the master read.
  int manifests = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.File("ckpt"))) {
    if (e.path().filename() != "manifest.json") continue;
    ++manifests;
    EXPECT_NE(ReadText(e.path()).find("t-shirt_top"), std::string::npos) << e.path();
  }
  EXPECT_GE(manifests, 1);
}

TEST(ImageFolders, ACorruptImageFailsTheJobNamingItOrIsSkippedAndCounted) {
  TempDir dir;
  WriteFolders(dir, 500);
  // A JPEG cut short, among the PNGs of one class.
  const std::string jpeg_cmd =
      "/usr/bin/python3 -c \"from PIL import Image; "
      "Image.new('L', (28, 28), 99).save('" +
      dir.File("x.jpg") + "')\"";
  ASSERT_EQ(std::system(jpeg_cmd.c_str()), 0);
  const std::string bytes = ReadText(dir.File("x.jpg"));
  WriteText(dir.File("train/coat/cut.jpg"), bytes.substr(0, bytes.size() / 2));
  std::vector<std::string> job = {"train",
                                  "--model_def=zoo:fashion_mnist_mlp",
                                  "--input_spec=" + kGray28,
                                  "--training_data=" + dir.File("train"),
                                  "--num_workers=1",
                                  "--num_ps_pods=1",
                                  "--minibatch_size=50",
                                  "--grace_period=5",
                                  "--progress_bar=false"};
  RunResult failed = RunEdl(job);
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.out.find(dir.File("train/coat/cut.jpg") + ": is a corrupt JPEG"),
            std::string::npos)
      << failed.out << failed.err;
  job.push_back("--skip_corrupt_records");
  RunResult r = RunEdl(job);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("corrupt records skipped: 1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 1: 501/501 records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.out;
  // An empty class folder is refused before anything runs.
  fs::create_directories(dir.File("train/empty"));
  RunResult empty =
      RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
              "--input_spec=" + kGray28, "--training_data=" + dir.File("train")});
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_NE(empty.err.find(dir.File("train/empty") + ": the class folder holds no images"),
            std::string::npos)
      << empty.err;
}

}  // namespace
}  // namespace edl::testing
