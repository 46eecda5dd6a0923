// The outputs a job on Kubernetes holds for the client that submitted it:
// what the master lists and serves in chunks, what the client accepts of a
// list (a master's answer is input: malformed ones are refused), and how
// the client rewrites a job so that its outputs come back.
#include "roles/job/held_outputs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "roles/job/kube_fetch.h"
#include "tests/testing/run_edl.h"

namespace edl::roles::job {
namespace {

using testing::ReadText;
using testing::TempDir;
using testing::WriteText;
using Json = nlohmann::json;

TEST(HeldOutputs, ListsEveryFileOfAnExportAndAPredictionFileAndServesThemInChunks) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("model/checkpoint/version-3"));
  WriteText(dir.File("model/model.json"), "{\"format\": \"layers-model\"}");
  const std::string big(kChunkBytes + 1000, 'w');
  WriteText(dir.File("model/checkpoint/version-3/weights"), big);
  WriteText(dir.File("p.csv"), "y\n1\n2\n");
  HeldOutputs held({{"output", dir.File("model")}, {"prediction_output", dir.File("p.csv")}});
  EXPECT_EQ(held.List().status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(held.Ready().ok());
  auto list = held.List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  auto files = ParseOutputList(*list, {"output", "prediction_output"});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].path, "checkpoint/version-3/weights");
  EXPECT_EQ((*files)[0].size, static_cast<int64_t>(big.size()));
  EXPECT_EQ((*files)[1].path, "model.json");
  EXPECT_EQ((*files)[2].output, "prediction_output");
  EXPECT_EQ((*files)[2].path, "");
  // The big file in two chunks that join to it.
  auto first = held.Chunk(R"({"file": 0, "offset": 0})");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->size(), static_cast<size_t>(kChunkBytes));
  auto second = held.Chunk(Json{{"file", 0}, {"offset", kChunkBytes}}.dump());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first + *second, big);
  EXPECT_EQ(*held.Chunk(R"({"file": 2, "offset": 0})"), "y\n1\n2\n");
  EXPECT_EQ(*held.Chunk(R"({"file": 2, "offset": 6})"), "");
}

TEST(HeldOutputs, MalformedChunkRequestsAndAMissingOutputAreRefused) {
  TempDir dir;
  WriteText(dir.File("p.csv"), "y\n1\n");
  HeldOutputs held({{"prediction_output", dir.File("p.csv")}});
  ASSERT_TRUE(held.Ready().ok());
  for (const char* bad : {"", "[]", "{\"file\": 0}", "{\"file\": \"0\", \"offset\": 0}",
                          "{\"file\": 1, \"offset\": 0}", "{\"file\": -1, \"offset\": 0}",
                          "{\"file\": 0, \"offset\": 99}", "{\"file\": 0, \"offset\": -1}"}) {
    EXPECT_EQ(held.Chunk(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  HeldOutputs missing({{"output", dir.File("nothing")}});
  Status s = missing.Ready();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("--output " + dir.File("nothing")), std::string::npos) << s.ToString();
}

// (The client's release is the kFetchedPath RPC: every fake-cluster job
// with an output on no volume ends seconds after its client fetched it,
// not after the 600 s limit.)
TEST(HeldOutputs, StoppingTheJobEndsTheWaitForTheClient) {
  TempDir dir;
  WriteText(dir.File("p.csv"), "y\n");
  HeldOutputs held({{"prediction_output", dir.File("p.csv")}});
  ASSERT_TRUE(held.Ready().ok());
  std::thread stopper([&] { held.Abandon(); });
  EXPECT_FALSE(held.WaitFetched(std::chrono::seconds(600)));
  stopper.join();
}

TEST(HeldOutputs, AListNamingFilesOutsideTheOutputsIsRefused) {
  const std::set<std::string> outputs = {"output"};
  EXPECT_TRUE(ParseOutputList(R"({"files": []})", outputs).ok());
  EXPECT_TRUE(
      ParseOutputList(R"({"files": [{"output": "output", "path": "a/b", "size": 3}]})", outputs)
          .ok());
  for (const char* bad : {
           "not json",
           R"({"files": {}})",
           R"({"files": [{"output": "output", "path": "../x", "size": 1}]})",
           R"({"files": [{"output": "output", "path": "a/../../x", "size": 1}]})",
           R"({"files": [{"output": "output", "path": "/etc/passwd", "size": 1}]})",
           R"({"files": [{"output": "checkpoint_dir", "path": "a", "size": 1}]})",
           R"({"files": [{"output": "output", "path": "a", "size": -1}]})",
           R"({"files": [{"output": "output", "path": "a"}]})",
           R"({"files": [{"output": "output", "path": 3, "size": 1}]})",
       }) {
    auto r = ParseOutputList(bad, outputs);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(HoldOutputsInPod, OutputsOnNoVolumeAreWrittenInThePodAndHeldForTheClient) {
  TempDir dir;
  MasterProcessOptions m;
  m.job.job_name = "j";
  m.output = dir.File("model");
  m.prediction_output = dir.File("preds/");
  auto fetch = HoldOutputsInPod(&m);
  ASSERT_TRUE(fetch.ok()) << fetch.status().ToString();
  ASSERT_EQ(fetch->size(), 2u);
  EXPECT_EQ((*fetch)[0].local, dir.File("model"));
  EXPECT_EQ(m.output.rfind(std::string(kHeldOutputsDir) + "/j-", 0), 0u) << m.output;
  // A directory output stays a directory in the pod.
  EXPECT_EQ(m.prediction_output.back(), '/') << m.prediction_output;
  EXPECT_EQ(m.kube.hold_outputs_s, kHoldOutputsSeconds);
}

TEST(HoldOutputsInPod, OutputsOnAVolumeStayAndTheRingsExportMustBeOnOne) {
  MasterProcessOptions m;
  m.job.job_name = "j";
  m.kube.volume = "claim_name=c,mount_path=/data";
  m.output = "/data/model";
  auto fetch = HoldOutputsInPod(&m);
  ASSERT_TRUE(fetch.ok());
  EXPECT_TRUE(fetch->empty());
  EXPECT_EQ(m.output, "/data/model");
  EXPECT_EQ(m.kube.hold_outputs_s, 0);
  m.output = "/elsewhere/model";
  m.allreduce = true;
  auto refused = HoldOutputsInPod(&m);
  EXPECT_NE(refused.status().message().find("put --output on a --volume"), std::string::npos)
      << refused.status().ToString();
}

TEST(HoldOutputsInPod, AnOutputNamingTheCurrentOrParentDirectoryIsRefused) {
  for (const char* path : {".", "./", "..", "a/.."}) {
    MasterProcessOptions m;
    m.job.job_name = "j";
    m.prediction_output = path;
    auto refused = HoldOutputsInPod(&m);
    EXPECT_NE(refused.status().message().find("name a file or directory below the current one"),
              std::string::npos)
        << path << ": " << refused.status().ToString();
  }
}

TEST(HoldOutputsInPod, AnExistingOutputThatIsNotAnExportIsRefusedBeforeTheJob) {
  TempDir dir;
  WriteText(dir.File("notes.txt"), "mine");
  MasterProcessOptions m;
  m.job.job_name = "j";
  m.output = dir.path();
  auto refused = HoldOutputsInPod(&m);
  EXPECT_NE(refused.status().message().find("is not an edl export"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(ReadText(dir.File("notes.txt")), "mine");
}

}  // namespace
}  // namespace edl::roles::job
