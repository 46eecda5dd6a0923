#include "tests/testing/counting_job.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "tests/testing/job_report.h"

namespace edl::testing {

void WriteCountingJob(const TempDir& dir, int records) {
  std::string csv = "rid,label\n";
  for (int i = 0; i < records; ++i) csv += std::to_string(i) + ",1000000\n";
  WriteText(dir.File("train.csv"), csv);
  const std::string n = std::to_string(records);
  WriteText(dir.File("counter.json"), R"({
    "model": {"class_name": "Sequential", "config": {"name": "counter", "layers": [
      {"class_name": "InputLayer",
       "config": {"batch_input_shape": [null], "dtype": "int64", "name": "rid"}},
      {"class_name": "Embedding", "config": {"name": "applied", "input_dim": )" +
                                          n + R"(, "output_dim": 1,
        "embeddings_initializer": "zeros"}},
      {"class_name": "Flatten", "config": {}}]}},
    "loss": "mean_absolute_error",
    "optimizer": {"class_name": "SGD", "config": {"learning_rate": 32}},
    "input": {"format": "csv", "label": "label", "label_type": "float",
              "categorical": [{"column": "rid", "num_buckets": )" +
                                          n + R"(}]}
  })");
}

std::vector<std::string> CountingJobArgs(const TempDir& dir, const std::string& name,
                                         const std::string& training_data, int epochs, int num_ps,
                                         std::vector<std::string> extra) {
  std::vector<std::string> args = {"train",
                                   "--job_name=" + name,
                                   "--jobs_dir=" + dir.path(),
                                   "--grace_period=5",
                                   "--model_def=" + dir.File("counter.json"),
                                   "--training_data=" + training_data,
                                   "--num_epochs=" + std::to_string(epochs),
                                   "--minibatch_size=32",
                                   "--num_minibatches_per_task=32",
                                   "--num_ps_pods=" + std::to_string(num_ps),
                                   "--num_workers=2",
                                   "--output=" + dir.File("out")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::map<float, int> RowHistogram(const std::string& export_dir, int records) {
  const nlohmann::json model = nlohmann::json::parse(ReadText(export_dir + "/model.json"));
  const nlohmann::json& weights = model.at("weightsManifest").at(0).at("weights");
  EXPECT_EQ(weights.size(), 1u) << weights.dump();
  EXPECT_EQ(weights.at(0).value("name", ""), "applied/embeddings") << weights.dump();
  const std::string bin = ReadText(export_dir + "/weights.bin");
  EXPECT_EQ(bin.size(), sizeof(float) * records);
  std::map<float, int> histogram;
  for (size_t at = 0; at + sizeof(float) <= bin.size(); at += sizeof(float)) {
    float v;
    std::memcpy(&v, bin.data() + at, sizeof v);
    ++histogram[v];
  }
  return histogram;
}

int StopAWorkerHoldingATrainingTask(const std::string& jobs_dir, const std::string& job) {
  auto holder = [&](const nlohmann::json& s) {
    if (!s.is_object() || !s.contains("workers")) return -1;
    for (const auto& w : s["workers"]) {
      for (const auto& t : w.value("tasks", nlohmann::json::array())) {
        if (t.value("type", "") == "training") return w.value("pid", -1);
      }
    }
    return -1;
  };
  const int pid = holder(JobStatus(jobs_dir, job));
  if (pid <= 0 || ::kill(pid, SIGSTOP) != 0) return -1;
  if (holder(JobStatus(jobs_dir, job)) == pid) return pid;
  ::kill(pid, SIGCONT);
  return -1;
}

std::string Describe(const std::map<float, int>& histogram) {
  std::string out;
  for (const auto& [times, rows] : histogram) {
    out += std::to_string(rows) + " records applied " + std::to_string(times) + " times; ";
  }
  return out;
}

}  // namespace edl::testing
