// Options of the processes of a distributed job (edl master / ps / worker),
// filled by cmd/ from flags; the master turns its own options into the
// command lines of the PS and worker processes it launches (ToArgs), so one
// definition serves both sides.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "roles/job_options.h"

namespace edl::roles::job {

// How to reach the job (its directory: secret, master address), and how
// every process of the job logs.
struct JobAccess {
  std::string job_name = "edl";
  std::string job_dir;             // <jobs_root>/<job_name>
  std::string secret_file;         // "" = <job_dir>/secret
  std::string log_level = "INFO";  // --log_level of every process
};

struct PsProcessOptions {
  JobAccess job;
  ModelOptions model;
  int ps_index = 0;
  int num_ps = 1;
  std::string host = "127.0.0.1";
  int port = 0;
  bool use_async = true;
  int grads_to_wait = 1;
  int64_t sync_version_tolerance = 0;
  bool lr_staleness_modulation = false;
  std::string checkpoint_dir;
  int64_t checkpoint_steps = 0;
  int keep_checkpoint_max = 0;
};

struct WorkerProcessOptions {
  JobAccess job;
  ModelOptions model;
  std::string worker_name = "worker-0";
  std::string master_addr;            // host:port
  std::vector<std::string> ps_addrs;  // host:port per PS, in PS order
  std::string training_data, validation_data, prediction_data;
  int64_t minibatch_size = 64;
  int get_model_steps = 1;
  // How gradients and dense parameters travel: "none", "bf16", "fp16".
  std::string gradient_compression = "none";
  bool shuffle = true;  // shuffle the records inside a training task
  std::chrono::milliseconds rpc_deadline{60000};
  // Seconds to keep retrying an unreachable master (being replaced).
  double master_outage_tolerance_s = 600;
  // AllreduceStrategy: no PS; gradients summed over a ring of workers.
  bool allreduce = false;
  std::string ring_host = "127.0.0.1";  // where the ring listener binds
  double allreduce_timeout_s = 10;      // a transfer idle this long fails
  std::string checkpoint_dir;           // written by the ring's rank 0
  int64_t checkpoint_steps = 0;
  int keep_checkpoint_max = 0;
  std::string output;  // the final export, written by the ring's rank 0
};

// A job on Kubernetes (--cluster=kube): where and how its pods run. The
// strings use ElasticDL's syntax and are checked by
// roles/cluster/kube_resources.h before anything is created.
struct KubeJobOptions {
  bool enabled = false;
  std::string kubeconfig;      // "" = $KUBECONFIG, in-cluster, ~/.kube/config
  std::string context;         // "" = the kubeconfig's current-context
  std::string namespace_name;  // "" = the context's (in a pod: the pod's)
  std::string image = "edl:latest";
  std::string image_pull_policy = "IfNotPresent";
  std::string master_resource_request = "cpu=0.1,memory=1024Mi";
  std::string master_resource_limit;  // "" = the request
  std::string worker_resource_request = "cpu=1,memory=4096Mi";
  std::string worker_resource_limit;
  std::string ps_resource_request = "cpu=1,memory=4096Mi";
  std::string ps_resource_limit;
  std::string master_pod_priority, worker_pod_priority, ps_pod_priority;
  std::string volume;  // "claim_name=c,mount_path=/p;host_path=/h,mount_path=/q"
  std::string envs;    // "K=V,K2=V2", for every pod of the job
  std::string service_account = "edl-master";  // the master pod's (workers: the default)
  std::string config_map;                      // the job's ConfigMap (set by the client)
  std::string secret_name;                     // the job's Secret (set by the client)
  // A Secret of the user's with database credentials: key "password" becomes
  // PGPASSWORD in every pod, and all its keys are files in kDatabaseSecretDir
  // (a passfile, TLS certificates: data/sql_url.h). "" = none.
  std::string database_secret;
  int termination_grace_period_s = 30;
  int ps_port = 2222;
  // Seconds the master holds --output / --prediction_output in its pod for
  // the client that submitted the job to fetch (roles/job/held_outputs.h;
  // set by the client); 0 = none.
  int hold_outputs_s = 0;
  // The master's own pod (from the downward API's POD_NAME, read by cmd/;
  // not a flag): its owner, the master's Job, owns the job's pods.
  std::string pod_name;
};

struct MasterProcessOptions {
  JobAccess job;
  ModelOptions model;
  std::string binary;  // the edl binary to launch PS and workers with
  std::string host = "127.0.0.1";
  int port = 0;
  std::string training_data, validation_data, prediction_data;
  std::string prediction_output;  // CSV for prediction jobs
  int num_workers = 2;
  int num_ps = 1;
  int num_epochs = 1;
  int64_t minibatch_size = 64;
  int64_t num_minibatches_per_task = 8;
  int64_t evaluation_steps = 0;
  int get_model_steps = 1;
  std::string gradient_compression = "none";  // passed to the workers
  bool shuffle = true;                        // task order and record order inside tasks
  bool use_async = true;
  int grads_to_wait = 1;
  int64_t sync_version_tolerance = 0;
  bool lr_staleness_modulation = false;
  std::string checkpoint_dir;
  int64_t checkpoint_steps = 0;
  int keep_checkpoint_max = 0;
  std::string output;               // export of the final model
  std::string tensorboard_log_dir;  // the master's TensorBoard event files
  int relaunch_on_worker_failure = 1;
  // The job fails when no PS checkpoint succeeded for this many
  // --checkpoint_steps intervals (0 = never).
  int max_failed_checkpoint_intervals = 3;
  bool allreduce = false;  // AllreduceStrategy (no PS)
  double allreduce_timeout_s = 10;
  double heartbeat_timeout_s = 2;
  // Seconds the workers keep retrying a master that is being replaced.
  double master_outage_tolerance_s = 600;
  // The local job host's socket (`edl train` owns the job's processes and
  // relaunches a master that dies); "" = this master launches them itself.
  std::string host_socket;
  std::chrono::milliseconds grace_period{25000};
  // The master's progress: a bar on a terminal (when progress_bar), else a
  // plain line every log_interval_s seconds.
  bool progress_bar = true;
  double log_interval_s = 10;
  KubeJobOptions kube;
};

// The --num_threads a PS or worker of the job gets when the job's is 0: on
// Kubernetes the pod's CPU limit (else its request), rounded up, or 0 (the
// pod's cgroup decides) when neither names a CPU. On the local cluster a
// worker gets the usable CPUs shared evenly among the workers, and a PS
// those CPUs shared among the PS and workers, each at least 1: a PS works
// while the workers wait for it, so a lone worker computes on every core.
// A non-zero --num_threads is every process's.
int ChildThreads(const MasterProcessOptions& o, bool ps, int local_cpus);

// Environment variables added to a PS's and a worker's own. On the local
// cluster, where they share the machine's cores, GOMP_SPINCOUNT=1000: an
// OpenMP thread out of work spins about a microsecond before it sleeps
// instead of libgomp's default 300,000 spins, which kept a worker's idle
// threads on the core its PS needed. Nothing when `user_tuned_openmp` (the
// user set GOMP_SPINCOUNT or OMP_WAIT_POLICY, which the children inherit)
// or on Kubernetes (every pod has its own CPUs).
std::map<std::string, std::string> ChildEnv(const MasterProcessOptions& o, bool user_tuned_openmp);

// Whether GOMP_SPINCOUNT or OMP_WAIT_POLICY is set in this process.
bool UserTunedOpenMp();

// Where the master keeps the job's state so a new master can take over
// (docs/kubernetes.md, 'A master pod that dies'): locally <job_dir>/master;
// on Kubernetes <checkpoint_dir>/master-state when --checkpoint_dir lies on
// one of the job's --volume mounts (every master pod sees it), else "": then
// a directory of the pod, copied to the ConfigMap <job>-master-state
// (roles/job/state_configmap.h).
std::string MasterStateDir(const MasterProcessOptions& o);

// The arguments (after the binary name) that make `edl ps` / `edl worker`
// parse back to these options.
std::vector<std::string> ToArgs(const PsProcessOptions& o);
std::vector<std::string> ToArgs(const WorkerProcessOptions& o);
std::vector<std::string> ToArgs(const MasterProcessOptions& o);
// "--a=1 --b=x": arguments as one line, for logs.
std::string JoinArgs(const std::vector<std::string>& args);
// The model flags shared by every process of the job.
std::vector<std::string> ModelArgs(const ModelOptions& o);
std::vector<std::string> JobArgs(const JobAccess& j);
// --cluster=kube and the Kubernetes flags (nothing when !k.enabled).
std::vector<std::string> KubeArgs(const KubeJobOptions& k);

}  // namespace edl::roles::job
