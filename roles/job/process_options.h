// Options of the processes of a distributed job (edl master / ps / worker),
// filled by cmd/ from flags; the master turns its own options into the
// command lines of the PS and worker processes it launches (ToArgs), so one
// definition serves both sides.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "roles/job_options.h"

namespace edl::roles::job {

// How to reach the job: its directory (secret, master address).
struct JobAccess {
  std::string job_name = "edl";
  std::string job_dir;      // <jobs_root>/<job_name>
  std::string secret_file;  // "" = <job_dir>/secret
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
  bool shuffle = true;  // shuffle the records inside a training task
  std::chrono::milliseconds rpc_deadline{60000};
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
  bool shuffle = true;  // task order and record order inside tasks
  bool use_async = true;
  int grads_to_wait = 1;
  int64_t sync_version_tolerance = 0;
  bool lr_staleness_modulation = false;
  std::string checkpoint_dir;
  int64_t checkpoint_steps = 0;
  int keep_checkpoint_max = 0;
  std::string output;  // export of the final model
  int relaunch_on_worker_failure = 1;
  double heartbeat_timeout_s = 2;
  std::chrono::milliseconds grace_period{25000};
};

// The arguments (after the binary name) that make `edl ps` / `edl worker`
// parse back to these options.
std::vector<std::string> ToArgs(const PsProcessOptions& o);
std::vector<std::string> ToArgs(const WorkerProcessOptions& o);
std::vector<std::string> ToArgs(const MasterProcessOptions& o);
// The model flags shared by every process of the job.
std::vector<std::string> ModelArgs(const ModelOptions& o);
std::vector<std::string> JobArgs(const JobAccess& j);

}  // namespace edl::roles::job
