#include "roles/job/process_options.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "roles/cluster/kube_resources.h"

namespace edl::roles::job {
namespace {

void Add(std::vector<std::string>* args, const std::string& flag, const std::string& value) {
  if (!value.empty()) args->push_back("--" + flag + "=" + value);
}

template <typename T>
std::string Str(T v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ",") + p;
  return s;
}

// The CPUs a pod's resource text names ("cpu=2,memory=1Gi", "cpu=500m"),
// rounded up; 0 when it names none (or does not parse: the master reports
// that error itself when it builds the pods).
int PodCpus(const std::string& resources) {
  auto list = cluster::ParseResources("", resources);
  if (!list.ok()) return 0;
  auto cpu = list->find("cpu");
  if (cpu == list->end()) return 0;
  const double cores = cluster::CpuCores(cpu->second);  // checked by ParseResources
  return cores > 0 ? std::max(1, static_cast<int>(std::ceil(cores - 1e-9))) : 0;
}

}  // namespace

std::string JoinArgs(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

int ChildThreads(const MasterProcessOptions& o, bool ps, int local_cpus) {
  if (o.model.num_threads > 0) return o.model.num_threads;
  if (o.kube.enabled) {
    const KubeJobOptions& k = o.kube;
    const std::string& limit = ps ? k.ps_resource_limit : k.worker_resource_limit;
    const std::string& request = ps ? k.ps_resource_request : k.worker_resource_request;
    const int from_limit = PodCpus(limit);
    return from_limit > 0 ? from_limit : PodCpus(request);
  }
  const int workers = std::max(1, o.num_workers);
  if (!ps) return std::max(1, local_cpus / workers);
  return std::max(1, local_cpus / (workers + o.num_ps));
}

std::map<std::string, std::string> ChildEnv(const MasterProcessOptions& o, bool user_tuned_openmp) {
  if (o.kube.enabled || user_tuned_openmp) return {};
  return {{"GOMP_SPINCOUNT", "1000"}};
}

bool UserTunedOpenMp() {
  return std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr;
}

std::vector<std::string> ModelArgs(const ModelOptions& o) {
  std::vector<std::string> args;
  Add(&args, "model_def", o.model_def);
  Add(&args, "loss", o.loss);
  Add(&args, "optimizer", o.optimizer);
  Add(&args, "metrics", o.metrics);
  if (o.learning_rate > 0) Add(&args, "learning_rate", Str(o.learning_rate));
  Add(&args, "checkpoint_dir_for_init", o.checkpoint_dir_for_init);
  Add(&args, "seed", Str(o.seed));
  Add(&args, "num_threads", Str(o.num_threads));
  if (!o.adapt_threads) Add(&args, "adapt_threads", "false");
  Add(&args, "device", o.device);
  Add(&args, "input_spec", o.input_spec);
  Add(&args, "data_index_dir", o.data_index_dir);
  if (o.skip_corrupt_records) Add(&args, "skip_corrupt_records", "true");
  if (o.data_in_memory) Add(&args, "data_in_memory", "true");
  return args;
}

std::vector<std::string> JobArgs(const JobAccess& j) {
  std::vector<std::string> args;
  Add(&args, "job_name", j.job_name);
  Add(&args, "job_dir", j.job_dir);
  Add(&args, "secret_file", j.secret_file);
  Add(&args, "log_level", j.log_level);
  return args;
}

std::vector<std::string> KubeArgs(const KubeJobOptions& k) {
  std::vector<std::string> args;
  if (!k.enabled) return args;
  args.push_back("--cluster=kube");
  Add(&args, "kubeconfig", k.kubeconfig);
  Add(&args, "context", k.context);
  Add(&args, "namespace", k.namespace_name);
  Add(&args, "image_name", k.image);
  Add(&args, "image_pull_policy", k.image_pull_policy);
  Add(&args, "master_resource_request", k.master_resource_request);
  Add(&args, "master_resource_limit", k.master_resource_limit);
  Add(&args, "worker_resource_request", k.worker_resource_request);
  Add(&args, "worker_resource_limit", k.worker_resource_limit);
  Add(&args, "ps_resource_request", k.ps_resource_request);
  Add(&args, "ps_resource_limit", k.ps_resource_limit);
  Add(&args, "master_pod_priority", k.master_pod_priority);
  Add(&args, "worker_pod_priority", k.worker_pod_priority);
  Add(&args, "ps_pod_priority", k.ps_pod_priority);
  Add(&args, "volume", k.volume);
  Add(&args, "envs", k.envs);
  Add(&args, "service_account", k.service_account);
  Add(&args, "job_config_map", k.config_map);
  Add(&args, "job_secret", k.secret_name);
  Add(&args, "database_secret", k.database_secret);
  Add(&args, "termination_grace_period", Str(k.termination_grace_period_s));
  Add(&args, "ps_port", Str(k.ps_port));
  if (k.hold_outputs_s > 0) Add(&args, "hold_outputs", Str(k.hold_outputs_s));
  return args;
}

std::vector<std::string> ToArgs(const PsProcessOptions& o) {
  std::vector<std::string> args = {"ps"};
  for (auto& a : JobArgs(o.job)) args.push_back(a);
  for (auto& a : ModelArgs(o.model)) args.push_back(a);
  Add(&args, "ps_index", Str(o.ps_index));
  Add(&args, "num_ps_pods", Str(o.num_ps));
  Add(&args, "host", o.host);
  Add(&args, "port", Str(o.port));
  Add(&args, "use_async", o.use_async ? "true" : "false");
  Add(&args, "grads_to_wait", Str(o.grads_to_wait));
  Add(&args, "sync_version_tolerance", Str(o.sync_version_tolerance));
  Add(&args, "lr_staleness_modulation", o.lr_staleness_modulation ? "true" : "false");
  Add(&args, "checkpoint_dir", o.checkpoint_dir);
  Add(&args, "checkpoint_steps", Str(o.checkpoint_steps));
  Add(&args, "keep_checkpoint_max", Str(o.keep_checkpoint_max));
  return args;
}

std::vector<std::string> ToArgs(const WorkerProcessOptions& o) {
  std::vector<std::string> args = {"worker"};
  for (auto& a : JobArgs(o.job)) args.push_back(a);
  for (auto& a : ModelArgs(o.model)) args.push_back(a);
  Add(&args, "worker_name", o.worker_name);
  Add(&args, "master_addr", o.master_addr);
  Add(&args, "ps_addrs", Join(o.ps_addrs));
  Add(&args, "training_data", o.training_data);
  Add(&args, "validation_data", o.validation_data);
  Add(&args, "prediction_data", o.prediction_data);
  Add(&args, "minibatch_size", Str(o.minibatch_size));
  Add(&args, "get_model_steps", Str(o.get_model_steps));
  Add(&args, "gradient_compression", o.gradient_compression);
  Add(&args, "shuffle", o.shuffle ? "true" : "false");
  Add(&args, "master_outage_tolerance", Str(o.master_outage_tolerance_s));
  if (o.allreduce) {
    Add(&args, "allreduce", "true");
    Add(&args, "ring_host", o.ring_host);
    Add(&args, "allreduce_timeout", Str(o.allreduce_timeout_s));
    Add(&args, "checkpoint_dir", o.checkpoint_dir);
    Add(&args, "checkpoint_steps", Str(o.checkpoint_steps));
    Add(&args, "keep_checkpoint_max", Str(o.keep_checkpoint_max));
    Add(&args, "output", o.output);
  }
  return args;
}

std::string MasterStateDir(const MasterProcessOptions& o) {
  if (!o.kube.enabled) return o.job.job_dir.empty() ? "" : o.job.job_dir + "/master";
  if (o.checkpoint_dir.empty()) return "";
  auto volumes = cluster::ParseVolumes("--volume", o.kube.volume);
  if (!volumes.ok()) return "";
  for (const cluster::VolumeSpec& v : *volumes) {
    const std::string& m = v.mount_path;
    const std::string& p = o.checkpoint_dir;
    if (p == m || (p.size() > m.size() && p.compare(0, m.size(), m) == 0 &&
                   (m.back() == '/' || p[m.size()] == '/'))) {
      return p + "/master-state";
    }
  }
  return "";
}

std::vector<std::string> ToArgs(const MasterProcessOptions& o) {
  std::vector<std::string> args = {"master"};
  for (auto& a : JobArgs(o.job)) args.push_back(a);
  for (auto& a : ModelArgs(o.model)) args.push_back(a);
  Add(&args, "host", o.host);
  Add(&args, "port", Str(o.port));
  Add(&args, "training_data", o.training_data);
  Add(&args, "validation_data", o.validation_data);
  Add(&args, "prediction_data", o.prediction_data);
  Add(&args, "prediction_output", o.prediction_output);
  Add(&args, "num_workers", Str(o.num_workers));
  Add(&args, "num_ps_pods", Str(o.num_ps));
  Add(&args, "num_epochs", Str(o.num_epochs));
  Add(&args, "minibatch_size", Str(o.minibatch_size));
  Add(&args, "num_minibatches_per_task", Str(o.num_minibatches_per_task));
  Add(&args, "evaluation_steps", Str(o.evaluation_steps));
  Add(&args, "get_model_steps", Str(o.get_model_steps));
  Add(&args, "gradient_compression", o.gradient_compression);
  Add(&args, "shuffle", o.shuffle ? "true" : "false");
  Add(&args, "use_async", o.use_async ? "true" : "false");
  Add(&args, "grads_to_wait", Str(o.grads_to_wait));
  Add(&args, "sync_version_tolerance", Str(o.sync_version_tolerance));
  Add(&args, "lr_staleness_modulation", o.lr_staleness_modulation ? "true" : "false");
  Add(&args, "checkpoint_dir", o.checkpoint_dir);
  Add(&args, "checkpoint_steps", Str(o.checkpoint_steps));
  Add(&args, "keep_checkpoint_max", Str(o.keep_checkpoint_max));
  Add(&args, "output", o.output);
  Add(&args, "tensorboard_log_dir", o.tensorboard_log_dir);
  Add(&args, "relaunch_on_worker_failure", Str(o.relaunch_on_worker_failure));
  Add(&args, "max_failed_checkpoint_intervals", Str(o.max_failed_checkpoint_intervals));
  Add(&args, "master_outage_tolerance", Str(o.master_outage_tolerance_s));
  if (!o.host_socket.empty()) Add(&args, "host_socket", o.host_socket);
  if (o.allreduce) {
    Add(&args, "distribution_strategy", "AllreduceStrategy");
    Add(&args, "allreduce_timeout", Str(o.allreduce_timeout_s));
  }
  Add(&args, "grace_period", Str(o.grace_period.count() / 1000.0));
  Add(&args, "progress_bar", o.progress_bar ? "true" : "false");
  Add(&args, "log_interval", Str(o.log_interval_s));
  for (auto& a : KubeArgs(o.kube)) args.push_back(a);
  return args;
}

}  // namespace edl::roles::job
