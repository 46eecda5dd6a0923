// The processes of a distributed job: edl master, edl ps and edl worker,
// normally launched by the job itself (the job host, the master, or a pod).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/logging.h"
#include "base/memory.h"
#include "cmd/commands.h"
#include "cmd/kube_flags.h"
#include "cmd/model_flags.h"
#include "roles/job/master_process.h"
#include "roles/job/process_options.h"
#include "roles/job/ps_process.h"
#include "roles/job/worker_process.h"

namespace edl::cmd {
namespace {

using roles::job::JobAccess;

void AddJobAccessFlags(CLI::App& app, JobAccess& j) {
  app.add_option("--job_name", j.job_name, "The job's name")->capture_default_str();
  app.add_option("--job_dir", j.job_dir, "The job's directory (secret, master address)");
  app.add_option("--secret_file", j.secret_file,
                 "File holding the job's RPC secret (default <job_dir>/secret)");
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

std::string SelfBinary() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
}

Runner AddMasterCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand(
      "master", "Run the master of a distributed job (started by `edl train`)");
  struct State {
    roles::job::MasterProcessOptions o;
    CommonFlags common;
    double grace_s = 25;
    std::string cluster = "local";
    std::string strategy = "ParameterServerStrategy";
  };
  auto s = std::make_shared<State>();
  auto& o = s->o;
  AddJobAccessFlags(*app, o.job);
  app->add_option("--distribution_strategy", s->strategy,
                  "ParameterServerStrategy or AllreduceStrategy")
      ->check(CLI::IsMember({"ParameterServerStrategy", "AllreduceStrategy"}))
      ->capture_default_str();
  app->add_option("--allreduce_timeout", o.allreduce_timeout_s,
                  "AllreduceStrategy: seconds a ring transfer may make no progress")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--cluster", s->cluster,
                  "Where the PS and workers run: local (child processes) or kube (pods)")
      ->check(CLI::IsMember({"local", "kube"}))
      ->capture_default_str();
  AddKubeJobFlags(*app, o.kube, /*for_master=*/true);
  AddModelFlags(*app, o.model);
  AddCommonFlags(*app, s->common);
  app->add_option("--host", o.host, "Address to listen on")->capture_default_str();
  app->add_option("--port", o.port, "Port to listen on (0: any free port)")->capture_default_str();
  app->add_option("--training_data", o.training_data, "Training data (IDX or CSV)");
  app->add_option("--validation_data", o.validation_data, "Validation data");
  app->add_option("--prediction_data", o.prediction_data, "Prediction data");
  app->add_option("--prediction_output", o.prediction_output, "CSV for predictions");
  app->add_option("--num_workers", o.num_workers, "Workers")->capture_default_str();
  app->add_option("--num_ps_pods", o.num_ps, "Parameter servers")->capture_default_str();
  app->add_option("--num_epochs", o.num_epochs, "Epochs")->capture_default_str();
  app->add_option("--minibatch_size", o.minibatch_size, "Records per step")->capture_default_str();
  app->add_option("--num_minibatches_per_task", o.num_minibatches_per_task, "Minibatches per task")
      ->capture_default_str();
  app->add_option("--evaluation_steps", o.evaluation_steps,
                  "Evaluate every N model versions (0: every epoch)")
      ->capture_default_str();
  app->add_option("--get_model_steps", o.get_model_steps,
                  "Workers pull dense parameters every N steps")
      ->capture_default_str();
  app->add_option("--gradient_compression", o.gradient_compression,
                  "Workers push gradients and pull dense parameters as 16-bit floats: "
                  "none, bf16 or fp16")
      ->check(CLI::IsMember({"none", "bf16", "fp16"}))
      ->capture_default_str();
  app->add_option("--shuffle", o.shuffle, "Shuffle tasks and the records inside them")
      ->capture_default_str();
  app->add_option("--use_async", o.use_async, "Asynchronous SGD")->capture_default_str();
  app->add_option("--grads_to_wait", o.grads_to_wait, "Sync SGD: pushes per update")
      ->capture_default_str();
  app->add_option("--sync_version_tolerance", o.sync_version_tolerance,
                  "Sync SGD: accepted staleness")
      ->capture_default_str();
  app->add_option("--lr_staleness_modulation", o.lr_staleness_modulation,
                  "Async SGD: scale gradients by 1/staleness")
      ->capture_default_str();
  app->add_option("--checkpoint_dir", o.checkpoint_dir, "PS checkpoints");
  app->add_option("--checkpoint_steps", o.checkpoint_steps, "Checkpoint every N versions");
  app->add_option("--keep_checkpoint_max", o.keep_checkpoint_max, "Keep N checkpoints (0: all)");
  app->add_option("--output", o.output, "Export the final model here");
  app->add_option("--tensorboard_log_dir", o.tensorboard_log_dir,
                  "Write TensorBoard event files (training loss, metrics, samples/s, "
                  "learning rate, workers, evaluations) into this directory");
  app->add_option("--relaunch_on_worker_failure", o.relaunch_on_worker_failure,
                  "Relaunches of a worker that failed (one killed by a signal is always "
                  "relaunched)")
      ->capture_default_str();
  app->add_option("--max_failed_checkpoint_intervals", o.max_failed_checkpoint_intervals,
                  "Fail the job when no PS checkpoint succeeded for N checkpoint intervals "
                  "(0 = never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--master_outage_tolerance", o.master_outage_tolerance_s,
                  "Seconds the workers keep retrying a master that is being replaced")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--host_socket", o.host_socket,
                  "The local job host's socket (set by `edl train`, which owns the job's "
                  "processes and relaunches a master that dies)");
  app->add_option("--grace_period", s->grace_s, "Seconds a stopping process gets before SIGKILL")
      ->capture_default_str();
  app->add_option("--progress_bar", o.progress_bar,
                  "Draw the job's progress as a bar when stderr is a terminal")
      ->capture_default_str();
  app->add_option("--log_interval", o.log_interval_s,
                  "Seconds between progress lines when stderr is not a terminal")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return [s]() {
    if (!ApplyCommonFlags(s->common)) return 2;
    s->o.job.log_level = s->common.log_level;
    s->o.grace_period = std::chrono::milliseconds(static_cast<int64_t>(s->grace_s * 1000));
    s->o.kube.enabled = s->cluster == "kube";
    if (const char* pod = std::getenv("POD_NAME")) s->o.kube.pod_name = pod;
    s->o.allreduce = s->strategy == "AllreduceStrategy";
    s->o.binary = SelfBinary();
    if (s->o.binary.empty()) return Fail(kNoSelfBinary);
    Status st = roles::job::RunMasterProcess(s->o);
    EDL_LOG(INFO) << PeakRssLine("master");
    if (!st.ok()) return Fail("job " + s->o.job.job_name + " failed: " + st.message());
    return 0;
  };
}

Runner AddPsCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand(
      "ps", "Run one parameter server of a distributed job (started by the master)");
  struct State {
    roles::job::PsProcessOptions o;
    CommonFlags common;
  };
  auto s = std::make_shared<State>();
  auto& o = s->o;
  AddJobAccessFlags(*app, o.job);
  AddModelFlags(*app, o.model);
  AddCommonFlags(*app, s->common);
  app->add_option("--ps_index", o.ps_index, "This PS's index")->capture_default_str();
  app->add_option("--num_ps_pods", o.num_ps, "Parameter servers in the job")->capture_default_str();
  app->add_option("--host", o.host, "Address to listen on")->capture_default_str();
  app->add_option("--port", o.port, "Port to listen on")->capture_default_str();
  app->add_option("--use_async", o.use_async, "Asynchronous SGD")->capture_default_str();
  app->add_option("--grads_to_wait", o.grads_to_wait, "Sync SGD: pushes per update")
      ->capture_default_str();
  app->add_option("--sync_version_tolerance", o.sync_version_tolerance,
                  "Sync SGD: accepted staleness")
      ->capture_default_str();
  app->add_option("--lr_staleness_modulation", o.lr_staleness_modulation,
                  "Async SGD: scale gradients by 1/staleness")
      ->capture_default_str();
  app->add_option("--checkpoint_dir", o.checkpoint_dir, "Checkpoint directory");
  app->add_option("--checkpoint_steps", o.checkpoint_steps, "Checkpoint every N versions");
  app->add_option("--keep_checkpoint_max", o.keep_checkpoint_max, "Keep N checkpoints (0: all)");
  return [s]() {
    if (!ApplyCommonFlags(s->common)) return 2;
    s->o.job.log_level = s->common.log_level;
    Status st = roles::job::RunPsProcess(s->o);
    EDL_LOG(INFO) << PeakRssLine("ps-" + std::to_string(s->o.ps_index));
    if (!st.ok()) return Fail("ps-" + std::to_string(s->o.ps_index) + ": " + st.message());
    return 0;
  };
}

Runner AddWorkerCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand(
      "worker", "Run one worker of a distributed job (started by the master)");
  struct State {
    roles::job::WorkerProcessOptions o;
    CommonFlags common;
    std::string ps_addrs;
  };
  auto s = std::make_shared<State>();
  auto& o = s->o;
  AddJobAccessFlags(*app, o.job);
  AddModelFlags(*app, o.model);
  AddCommonFlags(*app, s->common);
  app->add_option("--worker_name", o.worker_name, "This worker's name")->capture_default_str();
  app->add_option("--master_addr", o.master_addr, "The master's host:port")->required();
  app->add_option("--ps_addrs", s->ps_addrs,
                  "Comma-separated host:port of every PS (ParameterServerStrategy)");
  app->add_option("--allreduce", o.allreduce,
                  "AllreduceStrategy: train in a ring of workers instead of with PS")
      ->capture_default_str();
  app->add_option("--ring_host", o.ring_host,
                  "AllreduceStrategy: the address this worker's ring listener binds")
      ->capture_default_str();
  app->add_option("--allreduce_timeout", o.allreduce_timeout_s,
                  "AllreduceStrategy: seconds a ring transfer may make no progress")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--checkpoint_dir", o.checkpoint_dir,
                  "AllreduceStrategy: checkpoints written by the ring's rank 0");
  app->add_option("--checkpoint_steps", o.checkpoint_steps, "Checkpoint every N steps");
  app->add_option("--keep_checkpoint_max", o.keep_checkpoint_max, "Keep N checkpoints (0: all)");
  app->add_option("--output", o.output,
                  "AllreduceStrategy: the ring's rank 0 exports the final model here");
  app->add_option("--training_data", o.training_data, "Training data");
  app->add_option("--validation_data", o.validation_data, "Validation data");
  app->add_option("--prediction_data", o.prediction_data, "Prediction data");
  app->add_option("--minibatch_size", o.minibatch_size, "Records per step")->capture_default_str();
  app->add_option("--get_model_steps", o.get_model_steps, "Pull dense parameters every N steps")
      ->capture_default_str();
  app->add_option("--gradient_compression", o.gradient_compression,
                  "Push gradients and pull dense parameters as 16-bit floats: "
                  "none, bf16 or fp16")
      ->check(CLI::IsMember({"none", "bf16", "fp16"}))
      ->capture_default_str();
  app->add_option("--shuffle", o.shuffle, "Shuffle the records inside training tasks")
      ->capture_default_str();
  app->add_option("--master_outage_tolerance", o.master_outage_tolerance_s,
                  "Seconds to keep retrying a master that is being replaced (its task kept "
                  "and reported to the new one)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return [s]() {
    if (!ApplyCommonFlags(s->common)) return 2;
    s->o.job.log_level = s->common.log_level;
    s->o.ps_addrs = SplitComma(s->ps_addrs);
    Status st = roles::job::RunWorkerProcess(s->o);
    EDL_LOG(INFO) << PeakRssLine(s->o.worker_name);
    if (!st.ok()) return Fail(s->o.worker_name + ": " + st.message());
    return 0;
  };
}

}  // namespace edl::cmd
