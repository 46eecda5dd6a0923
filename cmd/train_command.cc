// edl train / evaluate / predict.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "base/clock.h"
#include "base/file.h"
#include "base/logging.h"
#include "cmd/commands.h"
#include "cmd/kube_flags.h"
#include "cmd/model_flags.h"
#include "roles/device_choice.h"
#include "roles/job/job_host.h"
#include "roles/job/kube_job.h"
#include "roles/job/process_options.h"
#include "roles/job_dir.h"
#include "roles/local/evaluation.h"
#include "roles/local/local_trainer.h"
#include "roles/local/model_source.h"
#include "roles/local/prediction.h"
#include "roles/summary/event_file.h"
#include "tensor/ops.h"

namespace edl::cmd {
namespace {

// Strategies accepted by --distribution_strategy (ElasticDL's names).
// AllreduceStrategy reduces gradients, so only `edl train` takes it.
bool CheckStrategy(const std::string& s, bool training) {
  if (s == "Local" || s == "ParameterServerStrategy") return true;
  if (s == "AllreduceStrategy") {
    if (training) return true;
    Fail(
        "--distribution_strategy=AllreduceStrategy trains only (it sums gradients); "
        "evaluate or predict with Local or ParameterServerStrategy");
    return false;
  }
  Fail(
      "--distribution_strategy: expected Local, ParameterServerStrategy or "
      "AllreduceStrategy, got \"" +
      s + "\"");
  return false;
}

// Hosts the job on this machine (roles/job/job_host.h): the job's output is
// its master's, and the exit code the job's outcome; a master that dies is
// replaced.
int HostLocalJob(roles::job::MasterProcessOptions m) {
  m.binary = SelfBinary();
  if (m.binary.empty()) return Fail(kNoSelfBinary);
  return roles::job::RunJobHost(m);
}

// --cluster, --detach and --yaml of a job that may run on Kubernetes.
struct ClusterFlags {
  std::string cluster = "local";
  bool detach = false;
  std::string yaml;
};

void AddClusterFlags(CLI::App& app, ClusterFlags& c, roles::job::KubeJobOptions& k) {
  app.add_option("--cluster", c.cluster,
                 "Where a distributed job runs: local (processes on this machine) or kube "
                 "(pods on the Kubernetes cluster of --kubeconfig; see docs/kubernetes.md)")
      ->check(CLI::IsMember({"local", "kube"}))
      ->capture_default_str();
  app.add_flag("--detach", c.detach,
               "--cluster=kube: return once the job is submitted instead of following its log");
  app.add_option("--yaml", c.yaml,
                 "--cluster=kube: write the job's Kubernetes objects to this YAML file instead "
                 "of submitting them");
  AddKubeJobFlags(app, k, /*for_master=*/false);
}

// A distributed job's master options, named `job_name` (edl-<pid> if
// empty); a local job also gets its directory under `jobs_dir`.
Result<roles::job::MasterProcessOptions> NewJob(const std::string& job_name,
                                                const std::string& jobs_dir,
                                                const ClusterFlags& c) {
  roles::job::MasterProcessOptions m;
  m.job.job_name = job_name.empty() ? "edl-" + std::to_string(::getpid()) : job_name;
  if (c.cluster != "kube") {
    EDL_ASSIGN_OR_RETURN(roles::JobDirectory dir,
                         roles::CreateJobDirectory(jobs_dir, m.job.job_name));
    m.job.job_dir = dir.path;
  }
  return m;
}

// Submits a job to Kubernetes and returns the client's exit code.
int RunOnKube(roles::job::MasterProcessOptions m, const ClusterFlags& c) {
  m.kube.enabled = true;
  roles::job::KubeSubmitOptions so;
  so.detach = c.detach;
  so.yaml_path = c.yaml;
  Status st = roles::job::SubmitKubeJob(m, so);
  if (!st.ok()) return Fail(st.message());
  return 0;
}

// Runs the job: becomes its master on the local cluster, or submits it.
// On the local cluster the workers run on this machine: --device=cuda
// without a usable GPU fails before the job exists, with the reason, rather
// than in every worker. (On Kubernetes the pods' nodes decide.)
bool LocalDeviceUsable(const std::string& device, const ClusterFlags& c) {
  if (c.cluster == "kube" || device != "cuda") return true;
  auto chosen = roles::ChooseDevice(device);
  if (chosen.ok()) return true;
  Fail(chosen.status().message());
  return false;
}

// AllreduceStrategy has no parameter server: the PS flags would be ignored,
// so a user who gives one explicitly is told instead.
bool RefusePsOnlyFlags(const CLI::App& app) {
  for (const char* flag :
       {"--num_ps_pods", "--use_async", "--grads_to_wait", "--sync_version_tolerance",
        "--lr_staleness_modulation", "--get_model_steps", "--num_minibatches_per_task",
        "--gradient_compression"}) {
    if (app.count(flag) > 0) {
      Fail(std::string(flag) +
           " does not apply to --distribution_strategy=AllreduceStrategy "
           "(no parameter servers: every worker holds the model, takes one minibatch per "
           "step and applies the summed gradients); remove it");
      return false;
    }
  }
  return true;
}

int LaunchJob(const roles::job::MasterProcessOptions& m, const ClusterFlags& c) {
  return c.cluster == "kube" ? RunOnKube(m, c) : HostLocalJob(m);
}

// The flags that make `edl evaluate` and `edl predict` a job of a master,
// PS and workers instead of a run in this process.
struct InferenceJobFlags {
  std::string strategy = "Local";
  std::string job_name;
  std::string jobs_dir = JobsRootFlagDefault();
  int num_workers = 2;
  int num_ps = 1;
  ClusterFlags cluster;
  roles::job::KubeJobOptions kube;
};

// `does`: "evaluates" or "predicts"; `job`: "an evaluation job" or "a
// prediction job".
void AddInferenceJobFlags(CLI::App& app, InferenceJobFlags& f, const std::string& does,
                          const std::string& job) {
  app.add_option("--distribution_strategy", f.strategy,
                 "Local " + does +
                     " in this process; ParameterServerStrategy runs a job of a "
                     "master, --num_ps_pods PS and --num_workers workers on --cluster")
      ->capture_default_str();
  app.add_option("--num_workers", f.num_workers, "Workers of " + job)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--num_ps_pods", f.num_ps, "Parameter servers of " + job)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--job_name", f.job_name, "The job's name (default edl-<pid>)");
  app.add_option("--jobs_dir", f.jobs_dir, "Where local jobs keep their directory")
      ->capture_default_str();
  AddClusterFlags(app, f.cluster, f.kube);
}

// Runs the job the flags ask for, its data set by `set_data`, and returns
// its exit code; nullopt when the command is to run in this process.
std::optional<int> RunInferenceJob(
    const InferenceJobFlags& f, const CommonFlags& common, const roles::ModelOptions& model,
    int minibatch_size, const std::function<void(roles::job::MasterProcessOptions&)>& set_data) {
  if (!CheckStrategy(f.strategy, false)) return 2;
  if (f.strategy != "ParameterServerStrategy") {
    if (f.cluster.cluster == "kube") {
      return Fail("--cluster=kube needs --distribution_strategy=ParameterServerStrategy");
    }
    return std::nullopt;
  }
  if (!LocalDeviceUsable(model.device, f.cluster)) return 1;
  auto job = NewJob(f.job_name, f.jobs_dir, f.cluster);
  if (!job.ok()) return Fail(job.status().message());
  roles::job::MasterProcessOptions& m = *job;
  m.job.log_level = common.log_level;
  m.model = model;
  m.minibatch_size = minibatch_size;
  m.num_workers = f.num_workers;
  m.num_ps = f.num_ps;
  m.kube = f.kube;
  set_data(m);
  return LaunchJob(m, f.cluster);
}

}  // namespace

Runner AddTrainCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("train", "Train a model");
  struct State {
    roles::TrainOptions o;
    CommonFlags common;
    std::string strategy = "ParameterServerStrategy";
    std::string job_name;
    ClusterFlags cluster;
    std::string jobs_dir = JobsRootFlagDefault();
    roles::job::MasterProcessOptions dist;
    double grace_s = 25;
  };
  auto s = std::make_shared<State>();
  roles::TrainOptions& o = s->o;
  AddModelFlags(*app, o.model);
  AddCommonFlags(*app, s->common);
  app->add_option("--training_data", o.training_data,
                  "Training data: an IDX images file (its labels file is found "
                  "beside it), a CSV file or a TFRecord file of tf.train.Examples, "
                  "plain or gzip (see docs/data.md); or many files: a directory, a glob "
                  "('/data/part-*.tfrecord.gz') or a comma-separated list")
      ->required();
  app->add_option("--validation_data", o.validation_data,
                  "Validation data, same formats; evaluated every --evaluation_steps "
                  "steps, else after every epoch");
  app->add_option("--num_epochs", o.num_epochs, "Passes over the training data")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--minibatch_size", o.minibatch_size, "Records per training step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--max_step", o.max_steps, "Stop after this many steps (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--evaluation_steps", o.evaluation_steps,
                  "Evaluate on --validation_data every N steps (0 = after every epoch)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--checkpoint_steps", o.checkpoint_steps,
                  "Write a checkpoint every N steps to --checkpoint_dir (0 = only at "
                  "the end)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--checkpoint_dir", o.checkpoint_dir,
                  "Directory for checkpoints (version-N subdirectories, written "
                  "atomically)");
  app->add_option("--keep_checkpoint_max", o.keep_checkpoint_max,
                  "Keep only the newest N checkpoints (0 = keep all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--output", o.output,
                  "Export the trained model here: a directory with a TF.js "
                  "model.json + weights.bin and an edl checkpoint");
  app->add_option("--tensorboard_log_dir", o.tensorboard_log_dir,
                  "Write TensorBoard event files here (`tensorboard --logdir DIR` plots "
                  "them): training loss, metrics, samples/s and learning rate about once a "
                  "second, every evaluation, and the worker count of a distributed job, "
                  "whose master writes them (on Kubernetes give a path on a --volume)");
  app->add_option("--shuffle", o.shuffle,
                  "Shuffle the training data every epoch (seeded by --seed)")
      ->capture_default_str();
  app->add_option("--progress_bar", o.progress_bar,
                  "Draw a progress bar on a terminal (plain progress lines otherwise)")
      ->capture_default_str();
  app->add_option("--log_interval", o.log_interval_s,
                  "Seconds between plain progress lines when not on a terminal")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--distribution_strategy", s->strategy,
                  "ParameterServerStrategy: a job of a master, --num_ps_pods parameter "
                  "servers and --num_workers workers on --cluster; AllreduceStrategy: "
                  "a master and --num_workers workers that train synchronously, summing "
                  "gradients over a ring that re-forms when workers leave or join "
                  "(no PS; docs/allreduce.md); Local: train in this process")
      ->capture_default_str();
  app->add_option("--job_name", s->job_name,
                  "A name for the job: logs, and `edl status/stop/scale JOB` (default edl-<pid>)");
  // Distributed training (--distribution_strategy=ParameterServerStrategy).
  auto& d = s->dist;
  AddClusterFlags(*app, s->cluster, d.kube);
  app->add_option("--jobs_dir", s->jobs_dir,
                  "Where local jobs keep their directory (secret, master address)")
      ->capture_default_str();
  app->add_option("--num_workers", d.num_workers, "Workers of a distributed job")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--num_ps_pods", d.num_ps, "Parameter servers of a distributed job")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--num_minibatches_per_task", d.num_minibatches_per_task,
                  "A task is minibatch_size x this many records")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--use_async", d.use_async,
                  "Asynchronous SGD (false: synchronous, see --grads_to_wait)")
      ->capture_default_str();
  app->add_option("--grads_to_wait", d.grads_to_wait,
                  "Sync SGD: gradients averaged into one update")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--sync_version_tolerance", d.sync_version_tolerance,
                  "Sync SGD: how many versions old a gradient may be")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--lr_staleness_modulation", d.lr_staleness_modulation,
                  "Async SGD: scale a stale gradient by 1/staleness")
      ->capture_default_str();
  app->add_option("--allreduce_timeout", d.allreduce_timeout_s,
                  "AllreduceStrategy: seconds a ring transfer may make no progress "
                  "before the step is redone on a re-formed ring (a dead worker is "
                  "noticed at once; this bounds a silent one)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--get_model_steps", d.get_model_steps,
                  "Workers pull dense parameters every N steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--gradient_compression", d.gradient_compression,
                  "Workers push gradients and pull dense parameters as 16-bit floats, "
                  "halving the parameter-server traffic: none, bf16 (float32's range, "
                  "8-bit mantissa) or fp16 (11-bit mantissa, overflows past 65504)")
      ->check(CLI::IsMember({"none", "bf16", "fp16"}))
      ->capture_default_str();
  app->add_option("--max_failed_checkpoint_intervals", d.max_failed_checkpoint_intervals,
                  "A failed periodic PS checkpoint is an incident (job page, edl status) and "
                  "is retried; the job fails, naming the reason, when none has succeeded for "
                  "N --checkpoint_steps intervals (0 = never fail for it)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--relaunch_on_worker_failure", d.relaunch_on_worker_failure,
                  "Relaunches of a worker that failed; a worker killed by a signal "
                  "(preempted, kill -9) is always relaunched")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--grace_period", s->grace_s,
                  "Seconds a stopping worker gets to hand back its task before SIGKILL")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--master_outage_tolerance", d.master_outage_tolerance_s,
                  "Seconds the workers keep retrying a master that died and is being "
                  "replaced (they keep their task and report it to the new master); "
                  "past it they give up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return [s, app]() {
    if (!ApplyCommonFlags(s->common)) return 2;
    if (!CheckStrategy(s->strategy, true)) return 2;
    if (s->strategy != "Local") {
      const roles::TrainOptions& o = s->o;
      if (o.max_steps > 0) return Fail("--max_step is not supported with " + s->strategy);
      if (s->strategy == "AllreduceStrategy" && !RefusePsOnlyFlags(*app)) return 2;
      if (!LocalDeviceUsable(s->o.model.device, s->cluster)) return 1;
      auto job = NewJob(s->job_name, s->jobs_dir, s->cluster);
      if (!job.ok()) return Fail(job.status().message());
      roles::job::MasterProcessOptions m = s->dist;
      m.job = job->job;
      m.job.log_level = s->common.log_level;
      m.model = o.model;
      m.training_data = o.training_data;
      m.validation_data = o.validation_data;
      m.num_epochs = o.num_epochs;
      m.minibatch_size = o.minibatch_size;
      m.evaluation_steps = o.evaluation_steps;
      m.checkpoint_dir = o.checkpoint_dir;
      m.checkpoint_steps = o.checkpoint_steps;
      m.keep_checkpoint_max = o.keep_checkpoint_max;
      m.output = o.output;
      m.tensorboard_log_dir = o.tensorboard_log_dir;
      if (!o.tensorboard_log_dir.empty() && s->cluster.cluster != "kube") {
        Status writable =
            roles::summary::CheckEventDir("--tensorboard_log_dir", o.tensorboard_log_dir);
        if (!writable.ok()) return Fail(writable.message());
      }
      m.shuffle = o.shuffle;
      m.grace_period = std::chrono::milliseconds(static_cast<int64_t>(s->grace_s * 1000));
      m.allreduce = s->strategy == "AllreduceStrategy";
      m.progress_bar = o.progress_bar;
      m.log_interval_s = o.log_interval_s;
      return LaunchJob(m, s->cluster);
    }
    if (s->cluster.cluster == "kube") {
      return Fail(
          "--cluster=kube needs --distribution_strategy=ParameterServerStrategy or "
          "AllreduceStrategy");
    }
    if (!s->job_name.empty()) EDL_LOG(INFO) << "job " << s->job_name;
    const bool terminal = IsTerminal(STDERR_FILENO);
    auto r = roles::RunLocalTraining(s->o, stderr, terminal, SystemClock());
    if (!r.ok()) return Fail(r.status().message());
    std::printf("final: %s\n", roles::FormatSummary(*r).c_str());
    return 0;
  };
}

Runner AddEvaluateCommand(CLI::App& parent) {
  CLI::App* app =
      parent.add_subcommand("evaluate",
                            "Evaluate a trained model (from --checkpoint_dir_for_init, an "
                            "export, or a TF.js model.json) on labeled data");
  struct State {
    roles::EvaluateOptions o;
    CommonFlags common;
    InferenceJobFlags job;
  };
  auto s = std::make_shared<State>();
  AddModelFlags(*app, s->o.model);
  AddCommonFlags(*app, s->common);
  AddInferenceJobFlags(*app, s->job, "evaluates", "an evaluation job");
  app->add_option("--validation_data", s->o.validation_data,
                  "Labeled data to evaluate on (IDX or CSV; a directory, glob or "
                  "comma-separated list for many files)")
      ->required();
  app->add_option("--minibatch_size", s->o.minibatch_size, "Records per batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return [s]() {
    if (!ApplyCommonFlags(s->common)) return 2;
    std::optional<int> job = RunInferenceJob(
        s->job, s->common, s->o.model, s->o.minibatch_size,
        [&](roles::job::MasterProcessOptions& m) { m.validation_data = s->o.validation_data; });
    if (job) return *job;
    roles::ModelOptions mo = s->o.model;
    mo.for_inference = true;
    tensor::SetNumThreads(mo.num_threads);  // 0: UsableCpus()
    auto cm = roles::CompileModel(mo);
    if (!cm.ok()) return Fail(cm.status().message());
    if (!cm->loss) {
      return Fail(cm->spec.origin + ": the model has no loss to evaluate; pass --loss");
    }
    data::OpenOptions reading;  // streamed: CSV/TFRecord read a batch at a time
    reading.stream = true;
    reading.index_dir = mo.data_index_dir;
    reading.skip_corrupt_records = mo.skip_corrupt_records;
    auto source = data::OpenSource(s->o.validation_data, cm->input, reading);
    if (!source.ok()) return Fail(source.status().WithPrefix("--validation_data").message());
    Status fits = roles::CheckSourceFitsModel(**source, *cm, "--validation_data", true);
    if (!fits.ok()) return Fail(fits.message());
    if ((*source)->num_records() == 0) {
      return Fail("--validation_data " + s->o.validation_data + ": holds no records");
    }
    const double start = SystemClock().NowSeconds();
    auto r = roles::Evaluate(*cm, **source, s->o.minibatch_size);
    if (!r.ok()) return Fail(r.status().message());
    const double seconds = SystemClock().NowSeconds() - start;
    std::printf("evaluation: %s (%lld records in %.2f s, %.0f records/s)\n", r->ToString().c_str(),
                static_cast<long long>(r->samples), seconds,
                seconds > 0 ? static_cast<double>(r->samples) / seconds : 0.0);
    return 0;
  };
}

Runner AddPredictCommand(CLI::App& parent) {
  CLI::App* app =
      parent.add_subcommand("predict", "Write a trained model's outputs for each record as CSV");
  struct State {
    roles::PredictOptions o;
    CommonFlags common;
    InferenceJobFlags job;
  };
  auto s = std::make_shared<State>();
  AddModelFlags(*app, s->o.model);
  AddCommonFlags(*app, s->common);
  AddInferenceJobFlags(*app, s->job, "predicts", "a prediction job");
  app->add_option("--prediction_data", s->o.prediction_data,
                  "Records to predict: IDX images, the model's CSV or TFRecord format, "
                  "or a CSV with a header whose rows are the flattened model input; one "
                  "file or many (a directory, a glob, a list)")
      ->required();
  app->add_option("--output", s->o.output,
                  "CSV file to write (atomically); with ParameterServerStrategy also a "
                  "directory (a trailing '/'): one CSV part per task, then _SUCCESS")
      ->required();
  app->add_option("--minibatch_size", s->o.minibatch_size, "Records per batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return [s]() {
    if (!ApplyCommonFlags(s->common)) return 2;
    std::optional<int> job = RunInferenceJob(s->job, s->common, s->o.model, s->o.minibatch_size,
                                             [&](roles::job::MasterProcessOptions& m) {
                                               m.prediction_data = s->o.prediction_data;
                                               m.prediction_output = s->o.output;
                                             });
    if (job) return *job;
    auto r = roles::RunPrediction(s->o);
    if (!r.ok()) return Fail(r.status().message());
    EDL_LOG(INFO) << "predicted " << r->records << " records in " << r->seconds << " s ("
                  << (r->seconds > 0 ? static_cast<double>(r->records) / r->seconds : 0)
                  << " records/s) into " << s->o.output;
    return 0;
  };
}

}  // namespace edl::cmd
