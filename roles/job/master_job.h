// MasterJob: the `edl master` process of a distributed job (RunMasterProcess,
// roles/job/master_process.h) as named steps that a master replacing a dead
// one re-enters (docs/distributed.md, 'A master that survives its own death'):
//
//   Prepare         the model, the data's records, the core: a new job, or
//                   the state the last master left in the state directory
//                   (refused if this master's flags differ from the job's)
//   Serve           the RPC service, /status, /metrics and job control on one
//                   port; replies wait until the change is durable
//   ConnectCluster  where the PS and workers run: children of the local job
//                   host (`edl train`), children of this process, or pods
//   StartPs         launch the PS, or adopt the ones still running
//   WaitForPs       until every PS answers
//   StartWorkers    launch the workers, or adopt the ones still running (a
//                   worker that died meanwhile is relaunched at once)
//   RunLoop         keep the workers at the core's target, report progress,
//                   tick the core, until the job ends
//   Finish          pull and export the model, write the predictions
//   StopAll         stop every process, print the final report
//
// Which PS addresses and worker names the job has is kept next to the core's
// journal (processes.json), so a new master finds them again.
// Internal to roles/job (master_job.cc, master_job_finish.cc).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/signal_watcher.h"
#include "base/status.h"
#include "kube/client.h"
#include "net/rpc.h"
#include "roles/cluster/kube_cluster.h"
#include "roles/cluster/supervisor.h"
#include "roles/job/held_outputs.h"
#include "roles/job/job_events.h"
#include "roles/job/job_progress.h"
#include "roles/job/prediction_parts.h"
#include "roles/job/process_options.h"
#include "roles/job/ps_watch.h"
#include "roles/job/state_configmap.h"
#include "roles/local/compiled_model.h"
#include "roles/master/master_core.h"
#include "roles/protocol/remote_services.h"

namespace edl::roles::job {

class MasterJob {
 public:
  explicit MasterJob(const MasterProcessOptions& o);
  ~MasterJob();
  MasterJob(const MasterJob&) = delete;
  MasterJob& operator=(const MasterJob&) = delete;

  // OK when the job succeeded, its failure otherwise.
  Status Run();

 private:
  Status Prepare();
  Status Serve();
  Status ConnectCluster();
  Status StartPs();
  Status WaitForPs();
  Status StartWorkers();
  Status RunLoop();
  Status Finish();
  Status StopAll(Status result);
  // Serves the outputs to the client that submitted the job until it
  // fetched them (--hold_outputs).
  Status HoldOutputs();

  // Keeps `spec` running: adopts it if it runs (started by an earlier
  // master), else launches it.
  Status Keep(const cluster::ProcessSpec& spec, const cluster::RelaunchPolicy& policy);
  cluster::ProcessSpec WorkerSpec(int index) const;
  // processes.json: the PS addresses, the next worker index, the workers.
  Status SavePlan() const;
  void RequestStop(const std::string& why);
  // The TensorBoard scalars and /series up to now (roles/job/job_events.h).
  void UpdateEvents();
  // The incident timeline to <state dir>/incidents.json when it changed,
  // for a new master.
  void SaveIncidents();

  const MasterProcessOptions o_;
  // Image data: the input spec with the class names this master read from
  // the training folders, passed to every PS and worker so that all agree
  // (and the PS's checkpoints keep them); "" otherwise.
  std::string resolved_input_spec_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> leave_{false};  // stop without ending the job (a master pod evicted)
  std::mutex stop_mu_;
  std::string stop_reason_;  // guarded by stop_mu_
  std::unique_ptr<SignalWatcher> signals_;

  std::string secret_;
  // Declared before the core, whose journal calls the ConfigMap copy.
  std::unique_ptr<kube::Client> kube_client_;
  std::string kube_description_;
  std::unique_ptr<StateConfigMap> state_configmap_;  // no volume for the state
  std::unique_ptr<CompiledModel> cm_;
  master::MasterOptions mopt_;
  std::unique_ptr<PredictionParts> prediction_parts_;
  std::unique_ptr<master::MasterCore> core_;
  std::unique_ptr<JobEvents> events_;  // --tensorboard_log_dir
  std::string state_dir_;              // "" = not durable
  // What the workers open for --training_data, --validation_data and
  // --prediction_data: the flags, with a database table's plan pinned
  // (Source::reopen_name) so that every worker reads the rows this master
  // counted.
  std::string training_data_, validation_data_, prediction_data_;
  bool recovered_ = false;
  nlohmann::json plan_;  // processes.json as read at start (null if none)

  // Before server_: destroyed after it, so no handler outlives it.
  std::unique_ptr<HeldOutputs> held_;  // --hold_outputs
  std::unique_ptr<net::RpcServer> server_;
  std::string master_addr_;
  std::mutex ps_info_mu_;
  nlohmann::json ps_info_ = nlohmann::json::array();  // guarded by ps_info_mu_

  std::unique_ptr<cluster::KubeCluster> kube_cluster_;
  std::unique_ptr<cluster::Cluster> own_cluster_;  // local or hosted
  cluster::Cluster* processes_ = nullptr;
  std::unique_ptr<cluster::Supervisor> supervisor_;
  JobAccess child_job_;

  std::set<std::string> ps_names_;
  std::vector<std::string> ps_addrs_;
  std::vector<std::unique_ptr<protocol::RemotePs>> remotes_;
  std::vector<protocol::PsService*> services_;
  // A PS back as a new process: the tasks it lost trained again (RunLoop).
  std::unique_ptr<PsWatch> ps_watch_;
  std::vector<std::string> ps_boots_;  // as reconciled (plan)
  std::string saved_incidents_;        // as last written
  bool stopping_job_ = false;
  std::vector<std::string> ps_stop_failures_;
  std::set<std::string> given_up_;
  std::string last_give_up_;
  cluster::RelaunchPolicy worker_policy_;
  int next_worker_ = 0;
  std::vector<std::string> active_;  // workers launched and not removed
  std::vector<std::string> gone_;    // not relaunched: the recovered job had ended
};

}  // namespace edl::roles::job
