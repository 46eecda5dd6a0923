// A job on Kubernetes reading image files from a volume: Fashion-MNIST PNG
// class folders (written by PIL) on a hostPath volume the pods mount at
// /images, class names read by the pods from the folders, the export (off
// every volume) fetched back to the client with the class names in it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/fakekube/fake_cluster.h"
#include "tests/testing/job_report.h"
#include "tests/testing/paths.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

using Json = nlohmann::json;

TEST(EdlOnKubeImages, TrainsFromPngClassFoldersOnAVolumeAndFetchesTheExportWithItsClasses) {
  TempDir images, out;
  const std::string cmd = "/usr/bin/python3 " + SourceDir() + "/scripts/fashion_mnist_images.py " +
                          images.path() + " --count 4000 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  std::vector<std::string> args = {"train"};
  for (auto& a :
       KubeJob(cluster, "images",
               {"--model_def=zoo:fashion_mnist_mlp",
                R"(--input_spec={"image": {"size": [28, 28], "channels": 1}})",
                "--volume=host_path=" + images.path() + ",mount_path=/images",
                "--training_data=/images/train", "--validation_data=/images/test", "--num_epochs=2",
                "--num_workers=2", "--num_ps_pods=1", "--output=" + out.File("model")})) {
    args.push_back(a);
  }
  RunResult r = RunEdl(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << cluster.Log();
  EXPECT_NE(r.out.find("epoch 2: 4000/4000 records trained, 0 missing, 0 trained twice"),
            std::string::npos)
      << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.7) << r.out;
  EXPECT_NE(r.err.find("fetched --output " + out.File("model") + " from the master pod"),
            std::string::npos)
      << r.err;
  const Json tfjs = Json::parse(ReadText(out.File("model/model.json")));
  EXPECT_EQ(tfjs["userDefinedMetadata"]["edl"]["input"]["image"]["class_names"],
            Json({"ankle_boot", "bag", "coat", "dress", "pullover", "sandal", "shirt", "sneaker",
                  "t-shirt_top", "trouser"}))
      << tfjs["userDefinedMetadata"].dump();
}

}  // namespace
}  // namespace edl::testing
