// Distributed training on the local cluster, end to end with real processes:
// a master, PS and workers of the real binary, with workers and PS killed,
// scaled and stopped on purpose while the job runs.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "data/planted_model.h"
#include "net/rpc.h"
#include "tests/tensorboard/tfevents_reader.h"
#include "tests/testing/job_report.h"
#include "tests/testing/master_kill.h"
#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

const std::string kData = EDL_FASHION_MNIST;
const std::string kTrain = kData + "/train-images-idx3-ubyte.gz";
const std::string kTest = kData + "/t10k-images-idx3-ubyte.gz";

std::vector<std::string> Job(const std::string& jobs_dir, const std::string& name,
                             std::vector<std::string> extra) {
  std::vector<std::string> args = {"train", "--distribution_strategy=ParameterServerStrategy",
                                   "--job_name=" + name, "--jobs_dir=" + jobs_dir,
                                   "--grace_period=5"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(Distributed, TwoPsAndTwoWorkersTrainEveryRecordExactlyOnce) {
  TempDir dir;
  RunResult r = RunEdl(
      Job(dir.path(), "exact",
          {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
           "--validation_data=" + kTest, "--num_epochs=2", "--num_workers=2", "--num_ps_pods=2",
           "--output=" + dir.File("model"), "--tensorboard_log_dir=" + dir.File("tb")}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(EpochsTrainedExactlyOnce(r.out), 2) << r.out;
  const double accuracy = Metric(r.out, "accuracy");
  EXPECT_GE(accuracy, 0.85) << r.out;
  // The master's TensorBoard scalars, read back by an independent reader.
  auto files = ReadEventFiles(dir.File("tb"));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].error, "");
  auto loss = PointsOf(files, "train/loss");
  ASSERT_FALSE(loss.empty());
  for (const auto& p : loss) {
    EXPECT_GT(p.value, 0.05f);
    EXPECT_LT(p.value, 3.0f);
  }
  for (size_t i = 1; i < loss.size(); ++i) EXPECT_GE(loss[i].step, loss[i - 1].step);
  EXPECT_EQ(loss.back().step, 1876);  // 2 epochs of 938 steps
  float most_workers = 0;
  for (const auto& p : PointsOf(files, "job/workers"))
    most_workers = std::max(most_workers, p.value);
  EXPECT_EQ(most_workers, 2.0f);
  EXPECT_FALSE(PointsOf(files, "train/samples_per_second").empty());
  // The zoo MLP's cosine schedule ends at 1e-4 after 1,876 steps.
  ASSERT_FALSE(PointsOf(files, "train/learning_rate").empty());
  EXPECT_NEAR(PointsOf(files, "train/learning_rate").back().value, 1e-4, 1e-8);
  auto acc = PointsOf(files, "validation/accuracy");
  ASSERT_EQ(acc.size(), 2u);  // after each epoch
  EXPECT_EQ(acc.back().step, 1876);
  // A training point at each epoch's end: at the version each round
  // evaluated, the one its epoch ended at.
  for (const auto& round : acc) {
    EXPECT_TRUE(std::any_of(loss.begin(), loss.end(),
                            [&](const ScalarPoint& p) { return p.step == round.step; }))
        << "no train/loss point at the end of an epoch, version " << round.step;
  }
  EXPECT_NEAR(acc.back().value, accuracy, 1e-4) << r.out;
  // The export holds the PS's final model: evaluating it gives the same figure.
  RunResult e = RunEdl(
      {"evaluate", "--checkpoint_dir_for_init=" + dir.File("model"), "--validation_data=" + kTest});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NEAR(Metric(e.out, "accuracy"), accuracy, 1e-4) << e.out << r.out;
}

TEST(Distributed, AWorkerKilledMidEpochIsReplacedAndNoRecordIsLost) {
  TempDir dir;
  EdlProcess job(
      Job(dir.path(), "kill9",
          {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
           "--validation_data=" + kTest, "--num_epochs=8", "--num_workers=2", "--num_ps_pods=1"}));
  nlohmann::json s;
  int victim = -1;
  auto worker0 = [&] {
    victim = -1;
    if (!s.is_object() || !s.contains("workers")) return -1;
    for (const auto& w : s["workers"]) {
      // Only while it holds a training task: killed then, it has work to
      // put back (between tasks, e.g. at an epoch's evaluation, it holds none).
      bool training = false;
      for (const auto& t : w.value("tasks", nlohmann::json::array())) {
        training = training || t.value("type", "") == "training";
      }
      if (w.value("name", "") == "worker-0" && training) victim = w.value("pid", -1);
    }
    return victim;
  };
  // Mid-epoch, with worker-0 registered (on a busy machine it may start
  // after worker-1 has trained for a while) and training. It is stopped
  // (SIGSTOP) before the status that decides is read, so that it cannot
  // finish its task between that read and the kill; if it holds none by
  // then it goes on, and the test waits for another moment.
  ASSERT_TRUE(WaitFor(
      [&] {
        s = JobStatus(dir.path(), "kill9");
        if (Version(s) < 300 || worker0() <= 0) return false;
        const int candidate = victim;
        if (::kill(candidate, SIGSTOP) != 0) return false;
        s = JobStatus(dir.path(), "kill9");
        if (worker0() == candidate) return true;
        ::kill(candidate, SIGCONT);
        return false;
      },
      60))
      << job.Err();
  ASSERT_GT(victim, 0) << s.dump();
  // `edl status` shows every process's thread count: here the machine's
  // cores shared among 1 PS and 2 workers, at least 1 each.
  ASSERT_EQ(s["ps"].size(), 1u) << s.dump();
  EXPECT_EQ(s["ps"][0].value("name", ""), "ps-0") << s.dump();
  EXPECT_GE(s["ps"][0].value("num_threads", 0), 1) << s.dump();
  for (const auto& w : s["workers"]) EXPECT_GE(w.value("num_threads", 0), 1) << s.dump();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);

  // A request without the job's secret is refused while the job runs.
  const std::string addr = ReadText(dir.path() + "/kill9/master.json");
  const int port = nlohmann::json::parse(addr).value("port", 0);
  net::RpcChannel wrong("127.0.0.1", port, "not-the-secret");
  auto refused = wrong.Call("/edl.Master/GetTask", "x", net::Millis(5000));
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated) << refused.status().message();
  // A malformed message with the right secret is refused too.
  net::RpcChannel right("127.0.0.1", port, ReadText(dir.path() + "/kill9/secret"));
  auto malformed = right.Call("/edl.Master/GetTask", "garbage", net::Millis(5000));
  EXPECT_EQ(malformed.status().code(), StatusCode::kInvalidArgument)
      << malformed.status().message();
  // The job's scalars so far, bounded, for a live view (GET /series): the
  // master adds them once a second.
  nlohmann::json sj;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto series = right.Get("/series", net::Millis(5000));
        if (!series.ok()) return false;
        sj = nlohmann::json::parse(*series, nullptr, false);
        return sj.is_object() && sj["series"].contains("train/loss");
      },
      30))
      << sj.dump();
  EXPECT_FALSE(sj["series"]["train/loss"].empty()) << sj.dump();
  EXPECT_LE(sj["series"]["train/loss"].size(), sj["capacity"].get<size_t>() + 1);
  EXPECT_TRUE(sj["series"].contains("job/workers")) << sj.dump();
  EXPECT_EQ(wrong.Get("/series", net::Millis(5000)).status().code(), StatusCode::kUnauthenticated);

  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("worker-0 (incarnation 1) killed by signal 9; relaunching"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(EpochsWithNothingMissing(r.out), 8) << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.84) << r.out;
  // The final report's incident table times the loss and the replacement:
  // detection, to_request, pending, to_step, tasks/records put back.
  std::smatch inc;
  ASSERT_TRUE(std::regex_search(
      r.out, inc,
      std::regex(
          "\n  worker-0 +[0-9:.]+ +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9]+)/([0-9]+)"
          "  exited: worker-0 \\(incarnation 1\\) killed by signal 9\n")))
      << r.out;
  EXPECT_LT(std::stod(inc[1]), 2.0) << r.out;  // within the heartbeat interval
  EXPECT_LT(std::stod(inc[2]), 0.5) << r.out;  // relaunched at once
  EXPECT_GT(std::stod(inc[3]), 0.0) << r.out;  // a new process takes time to register
  EXPECT_LT(std::stod(inc[3]), 30.0) << r.out;
  EXPECT_GE(std::stoi(inc[5]), 1) << r.out;  // it held a task (it leases ahead)
  EXPECT_GT(std::stoi(inc[6]), 0) << r.out;
}

TEST(Distributed, AKilledPsRestartsFromItsCheckpoint) {
  TempDir dir;
  EdlProcess job(
      Job(dir.path(), "killps",
          {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
           "--validation_data=" + kTest, "--num_epochs=8", "--num_workers=2", "--num_ps_pods=2",
           "--checkpoint_dir=" + dir.File("ckpt"), "--checkpoint_steps=100"}));
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "killps")) >= 400; }, 60))
      << job.Err();
  std::vector<int> ps = FindPids({" ps ", "--job_name=killps", "--ps_index=1"});
  ASSERT_EQ(ps.size(), 1u);
  ASSERT_EQ(::kill(ps[0], SIGKILL), 0);
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ps-1 (incarnation 1) killed by signal 9; relaunching"), std::string::npos)
      << r.err;
  // The relaunched PS came back from a checkpoint, not from scratch.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.err, m, std::regex("\\[ps-1\\].*serving on .* at version ([1-9][0-9]*)")))
      << r.err;
  EXPECT_EQ(EpochsWithNothingMissing(r.out), 8) << r.out;
  EXPECT_GE(Metric(r.out, "accuracy"), 0.84) << r.out;
}

// The newest checkpoint incident in a status, or null.
nlohmann::json LastCheckpointIncident(const nlohmann::json& status) {
  if (!status.is_object() || !status.contains("checkpoint_incidents") ||
      status["checkpoint_incidents"].empty()) {
    return nullptr;
  }
  return status["checkpoint_incidents"].back();
}

// A periodic checkpoint that fails (the directory became a plain file) is
// an incident in the status, with the last good version; it is retried and
// closes once one succeeds again; the timeline outlives a master killed
// outright; and the job fails, naming the reason, once no checkpoint has
// succeeded for --max_failed_checkpoint_intervals intervals.
TEST(Distributed, FailedPeriodicCheckpointsAreIncidentsThatOutliveTheMasterAndFailTheJobInTime) {
  TempDir dir;
  const std::string ckpt = dir.File("ckpt");
  EdlProcess job(
      Job(dir.path(), "ckptfail",
          {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain, "--num_epochs=30",
           "--num_workers=1", "--num_ps_pods=2", "--checkpoint_dir=" + ckpt,
           "--checkpoint_steps=1000", "--max_failed_checkpoint_intervals=3"}));
  auto break_dir = [&] {
    std::filesystem::remove_all(ckpt);
    WriteText(ckpt, "not a directory");
  };
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "ckptfail")) >= 1100; }, 120))
      << job.Err();
  break_dir();
  nlohmann::json incident;
  ASSERT_TRUE(WaitFor(
      [&] {
        incident = LastCheckpointIncident(JobStatus(dir.path(), "ckptfail"));
        return !incident.is_null();
      },
      60))
      << job.Err();
  EXPECT_GE(incident["last_good_version"].get<int64_t>(), 1000) << incident.dump();
  EXPECT_GT(incident["first_failed_version"].get<int64_t>(),
            incident["last_good_version"].get<int64_t>())
      << incident.dump();
  EXPECT_NE(incident["error"].get<std::string>().find(ckpt), std::string::npos) << incident.dump();
  EXPECT_TRUE(incident["recovered_version"].is_null()) << incident.dump();
  const int64_t first_failed = incident["first_failed_version"].get<int64_t>();
  // The directory back: a retry succeeds and closes the incident.
  std::filesystem::remove(ckpt);
  std::filesystem::create_directories(ckpt);
  ASSERT_TRUE(WaitFor(
      [&] {
        incident = LastCheckpointIncident(JobStatus(dir.path(), "ckptfail"));
        return !incident.is_null() && incident["recovered_version"].is_number_integer();
      },
      60))
      << job.Err();
  EXPECT_GT(incident["recovered_version"].get<int64_t>(), first_failed) << incident.dump();
  // A new master shows the timeline the old one kept.
  KillMaster(dir.path(), "ckptfail", job);
  incident = LastCheckpointIncident(JobStatus(dir.path(), "ckptfail"));
  ASSERT_FALSE(incident.is_null()) << job.Err();
  EXPECT_EQ(incident["first_failed_version"].get<int64_t>(), first_failed) << incident.dump();
  // Broken for good: the job fails within the intervals allowed.
  break_dir();
  RunResult r = job.Wait();
  EXPECT_NE(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex("ps-[01]: no checkpoint written for 3 checkpoint intervals \\(1000 versions "
                 "each\\): the last good one is version ([0-9]+), and the attempt at version "
                 "([0-9]+) failed")))
      << r.out << r.err;
  EXPECT_GE(std::stoll(m[2]) - std::stoll(m[1]), 3000) << m[0];
  // Checked every 2 s: a little past the limit at most.
  EXPECT_LT(std::stoll(m[2]) - std::stoll(m[1]), 3000 + 2000) << m[0];
  EXPECT_NE(r.out.find("checkpoint incidents:"), std::string::npos) << r.out;
}

// A periodic checkpoint that fails is an incident (above); a final one that
// fails fails the job, naming why (here the directory became a plain file).
TEST(Distributed, AFailedFinalCheckpointFailsTheJobNamingTheReason) {
  TempDir dir;
  const std::string ckpt = dir.File("ckpt");
  EdlProcess job(Job(dir.path(), "badckpt",
                     {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTest,
                      "--num_epochs=4", "--num_workers=1", "--num_ps_pods=2",
                      "--checkpoint_dir=" + ckpt, "--checkpoint_steps=100000"}));
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "badckpt")) >= 20; }, 60))
      << job.Err();
  std::filesystem::remove_all(ckpt);
  WriteText(ckpt, "not a directory");
  RunResult r = job.Wait();
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("final checkpoint: ps-0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(ckpt), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("job badckpt failed"), std::string::npos) << r.out;
}

TEST(Distributed, AJobStartsFromAnotherJobsPsCheckpoints) {
  TempDir dir;
  RunResult first =
      RunEdl(Job(dir.path(), "first",
                 {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTest, "--num_epochs=1",
                  "--num_workers=1", "--num_ps_pods=2", "--checkpoint_dir=" + dir.File("ckpt")}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // Into 1 PS instead of 2: each PS keeps what it owns of every partition.
  RunResult second =
      RunEdl(Job(dir.path(), "second",
                 {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTest,
                  "--validation_data=" + kTest, "--num_epochs=1", "--num_workers=1",
                  "--num_ps_pods=1", "--checkpoint_dir_for_init=" + dir.File("ckpt")}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(std::regex_search(second.err,
                                std::regex("\\[ps-0\\].*serving on .* at version ([1-9][0-9]*)")))
      << second.err;
}

TEST(Distributed, PredictionOnTheClusterWritesWhatLocalPredictionWrites) {
  TempDir dir;
  ASSERT_EQ(RunEdl({"train", "--distribution_strategy=Local", "--model_def=zoo:fashion_mnist_mlp",
                    "--training_data=" + kTest, "--max_step=50", "--output=" + dir.File("model")})
                .exit_code,
            0);
  RunResult local = RunEdl({"predict", "--checkpoint_dir_for_init=" + dir.File("model"),
                            "--prediction_data=" + kTest, "--output=" + dir.File("local.csv")});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  RunResult job =
      RunEdl({"predict", "--distribution_strategy=ParameterServerStrategy", "--job_name=predict",
              "--jobs_dir=" + dir.path(), "--checkpoint_dir_for_init=" + dir.File("model"),
              "--prediction_data=" + kTest, "--output=" + dir.File("job.csv"), "--num_workers=2",
              "--num_ps_pods=2"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  const std::string expected = ReadText(dir.File("local.csv"));
  EXPECT_GT(expected.size(), 10000u);
  EXPECT_EQ(ReadText(dir.File("job.csv")), expected);
  EXPECT_FALSE(std::filesystem::exists(dir.File("job.csv.parts")));

  // Into a directory: the parts, one per task, are the output.
  RunResult parts =
      RunEdl({"predict", "--distribution_strategy=ParameterServerStrategy",
              "--job_name=predict-parts", "--jobs_dir=" + dir.path(),
              "--checkpoint_dir_for_init=" + dir.File("model"), "--prediction_data=" + kTest,
              "--output=" + dir.File("parts") + "/", "--num_workers=2", "--num_ps_pods=1"});
  ASSERT_EQ(parts.exit_code, 0) << parts.err;
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.File("parts")))
    names.insert(e.path().filename().string());
  ASSERT_EQ(names.count("_SUCCESS"), 1u);
  std::string joined;
  for (const std::string& name : names) {
    if (name == "_SUCCESS") continue;
    const std::string text = ReadText(dir.File("parts") + "/" + name);
    joined += joined.empty() ? text : text.substr(text.find('\n') + 1);
  }
  EXPECT_GT(names.size(), 2u);
  EXPECT_EQ(joined, expected);
}

TEST(Distributed, ScalesOneToThreeToTwoWorkersAndSigtermHandsTheTaskBack) {
  TempDir dir;
  EdlProcess job(Job(dir.path(), "scale",
                     {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
                      "--num_epochs=20", "--num_workers=1", "--num_ps_pods=1",
                      // Long tasks: a SIGTERM almost always lands inside one.
                      "--num_minibatches_per_task=64"}));
  auto registered = [&](size_t n) {
    nlohmann::json s = JobStatus(dir.path(), "scale");
    if (!s.is_object()) return false;
    size_t alive = 0;
    for (const auto& w : s["workers"]) alive += w.value("stopping", false) ? 0 : 1;
    return alive == n;
  };
  ASSERT_TRUE(WaitFor([&] { return registered(1); }, 60)) << job.Err();
  ASSERT_EQ(RunEdl({"scale", "scale", "--num_workers=3", "--jobs_dir=" + dir.path()}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return registered(3); }, 60)) << job.Err();
  ASSERT_EQ(RunEdl({"scale", "scale", "--num_workers=2", "--jobs_dir=" + dir.path()}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return registered(2); }, 60)) << job.Err();
  // A graceful stop (preemption notice) of one of the two.
  std::vector<int> w = FindPids({" worker ", "--job_name=scale", "--worker_name=worker-0"});
  ASSERT_EQ(w.size(), 1u);
  ASSERT_EQ(::kill(w[0], SIGTERM), 0);
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("scaling down: worker-2 leaves"), std::string::npos) << r.err;
  // The stopped worker leaves cleanly (exit 0, not relaunched); a task it
  // held goes back to the queue at once.
  EXPECT_NE(r.err.find("worker-0: signal 15, stopping"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("supervisor: worker-0 (incarnation 1) exited with code 0"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("relaunched worker-0"), std::string::npos) << r.err;
  if (r.err.find("worker-0: stopping; handing back") != std::string::npos) {
    EXPECT_TRUE(std::regex_search(r.err, std::regex("worker worker-0 \\(id [0-9]+\\) exited; "
                                                    "[1-9][0-9]* task\\(s\\) put back")))
        << r.err;
  }
  EXPECT_EQ(EpochsWithNothingMissing(r.out), 20) << r.out;
}

TEST(Distributed, StopEndsARunningJobWithAClearReason) {
  TempDir dir;
  EdlProcess job(Job(dir.path(), "stopme",
                     {"--model_def=zoo:fashion_mnist_mlp", "--training_data=" + kTrain,
                      "--num_epochs=50", "--num_workers=1", "--num_ps_pods=1"}));
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "stopme")) >= 10; }, 60))
      << job.Err();
  RunResult stop = RunEdl({"stop", "stopme", "--jobs_dir=" + dir.path()});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  RunResult r = job.Wait();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("stopped by `edl stop`"), std::string::npos) << r.err;
  // Every process of the job is gone.
  EXPECT_TRUE(FindPids({"--job_name=stopme"}).empty());
}

TEST(Distributed, SyncSgdWithOneWorkerMatchesLocalTrainingStepForStep) {
  TempDir dir;
  const std::vector<std::string> common = {"--model_def=zoo:fashion_mnist_mlp",
                                           "--training_data=" + kTest,
                                           "--validation_data=" + kTest,
                                           "--num_epochs=1",
                                           "--shuffle=false",
                                           "--seed=5"};
  std::vector<std::string> local = {"train", "--distribution_strategy=Local", "--num_threads=1"};
  local.insert(local.end(), common.begin(), common.end());
  RunResult l = RunEdl(local);
  std::vector<std::string> sync = {"--num_workers=1", "--num_ps_pods=1", "--use_async=false",
                                   "--grads_to_wait=1"};
  sync.insert(sync.end(), common.begin(), common.end());
  RunResult d = RunEdl(Job(dir.path(), "sync", sync));
  ASSERT_EQ(l.exit_code, 0) << l.err;
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const double local_loss = Metric(l.out, "val_loss");
  const double dist_loss = Metric(d.out, "loss");
  EXPECT_GT(local_loss, 0);
  EXPECT_NEAR(dist_loss, local_loss, 1e-4) << l.out << d.out;
  EXPECT_NEAR(Metric(d.out, "accuracy"), Metric(l.out, "val_accuracy"), 1e-4);
}

TEST(Distributed, TabularDeepFmTrainsThroughThePsToItsAucBar) {
  TempDir dir;
  data::PlantedOptions o;
  o.num_rows = 100000;
  o.interaction_std = 0.5;
  o.row_seed = 1;
  ASSERT_TRUE(data::WritePlantedCsv(dir.File("train.csv"), o).ok());
  o.num_rows = 10000;
  o.row_seed = 2;
  auto valid = data::WritePlantedCsv(dir.File("valid.csv"), o);
  ASSERT_TRUE(valid.ok());
  RunResult r =
      RunEdl(Job(dir.path(), "deepfm",
                 {"--model_def=zoo:planted_deepfm", "--training_data=" + dir.File("train.csv"),
                  "--validation_data=" + dir.File("valid.csv"), "--num_epochs=3",
                  "--minibatch_size=128", "--num_workers=2", "--num_ps_pods=2"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(Metric(r.out, "auc"), valid->planted_auc - 0.03)
      << "planted " << valid->planted_auc << "\n"
      << r.out;
  EXPECT_EQ(EpochsWithNothingMissing(r.out), 3) << r.out;
}

}  // namespace
}  // namespace edl::testing
