#include "roles/job/master_job.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "base/clock.h"
#include "base/cpus.h"
#include "base/file.h"
#include "base/logging.h"
#include "data/source.h"
#include "kube/config.h"
#include "kube/json_path.h"
#include "roles/cluster/hosted_cluster.h"
#include "roles/cluster/local_cluster.h"
#include "roles/job/job_page.h"
#include "roles/job/master_cluster.h"
#include "roles/job/master_process.h"
#include "roles/job/ps_process.h"
#include "roles/job/state_configmap.h"
#include "roles/job_dir.h"
#include "roles/local/model_export.h"
#include "roles/local/prediction.h"
#include "roles/progress.h"
#include "tensor/ops.h"

namespace edl::roles::job {
namespace {

using std::chrono::milliseconds;

std::string PsName(int i) { return "ps-" + std::to_string(i); }
std::string WorkerName(int i) { return "worker-" + std::to_string(i); }

}  // namespace

Status RunMasterProcess(const MasterProcessOptions& options) { return MasterJob(options).Run(); }

MasterJob::MasterJob(const MasterProcessOptions& o) : o_(o) {}
MasterJob::~MasterJob() {
  // A pod's copy of the state kept in a ConfigMap: the journal's last
  // writes (in its destructor) still go to the ConfigMap, then the copy goes.
  core_.reset();
  if (state_configmap_) {
    std::error_code ec;
    std::filesystem::remove_all(state_dir_, ec);
  }
}

void MasterJob::RequestStop(const std::string& why) {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (!stop_requested_) stop_reason_ = why;
  stop_requested_ = true;
  if (held_) held_->Abandon();  // `edl stop` or a signal during the hold ends it
}

Status MasterJob::Run() {
  signals_ = std::make_unique<SignalWatcher>([this](int signo) {
    // A master pod with durable state that gets SIGTERM is being evicted,
    // preempted or drained: it leaves the job to the next master pod
    // instead of ending it. Elsewhere a signal stops the job.
    if (o_.kube.enabled) leave_ = true;
    RequestStop(std::string("stopped by signal ") + (signo == SIGINT ? "SIGINT" : "SIGTERM"));
  });
  Status s = Prepare();
  if (s.ok()) s = Serve();
  if (s.ok()) s = ConnectCluster();
  if (s.ok()) s = StartPs();
  if (s.ok()) s = WaitForPs();
  if (s.ok()) s = StartWorkers();
  if (!s.ok() && !supervisor_) return s;  // nothing started
  if (s.ok()) s = RunLoop();
  if (leave_) {
    EDL_LOG(WARNING) << "SIGTERM: this master leaves; the job's state is in " << state_dir_
                     << " and its Job starts the next master, which adopts the running pods";
    server_->Stop();
    core_.reset();  // every change on disk
    if (state_configmap_) {
      std::error_code ec;
      std::filesystem::remove_all(state_dir_, ec);  // the ConfigMap holds it
    }
    std::fflush(nullptr);
    ::_exit(kMasterLeavesExitCode);
  }
  if (s.ok()) s = Finish();
  return StopAll(s);
}

Status MasterJob::Serve() {
  const MasterProcessOptions& o = o_;
  net::ServerOptions so;
  so.host = o.host;
  so.port = o.port;
  so.secret = secret_;
  // A reply goes out once the change it reports is durable, so no worker
  // acts on what a restarted master would not know.
  // A change that cannot be made durable is Unavailable to the caller: it
  // retries, and the next master (this one exits) answers.
  so.reply_gate = [core = core_.get()](std::function<void(Status)> release) {
    core->WhenDurable([release = std::move(release)](Status s) {
      release(s.ok() ? s
                     : Unavailable("the master cannot keep its state (" + s.message() +
                                   "); a new master takes over"));
    });
  };
  server_ = std::make_unique<net::RpcServer>(so);
  protocol::ServeMaster(*core_, *server_);
  // On Kubernetes the client reads /status through the API server's
  // service proxy, which carries no job secret; Kubernetes RBAC on
  // services/proxy guards it there.
  // The PS are the master's own children: their thread counts are the ones
  // it launched them with (the workers report theirs when they register).
  server_->HandleGet(
      "/status",
      [this] {
        nlohmann::json st = nlohmann::json::parse(core_->StatusJson(), nullptr, false);
        if (!st.is_object()) return net::HttpResponse{200, "application/json", core_->StatusJson()};
        {
          std::lock_guard<std::mutex> lock(ps_info_mu_);
          st["ps"] = ps_info_;
        }
        return net::HttpResponse{200, "application/json", st.dump()};
      },
      /*public_access=*/o.kube.enabled);
  // The job's scalars over time, bounded (roles/job/job_events.h).
  server_->HandleGet(
      "/series",
      [this] {
        return net::HttpResponse{200, "application/json", events_->series().ToJson().dump()};
      },
      /*public_access=*/o.kube.enabled);
  // The job page: static HTML whose scripts fetch status and series with
  // the secret from the URL fragment, so serving the page itself needs none.
  server_->HandleGet(
      "/",
      [] {
        return net::HttpResponse{200, "text/html; charset=utf-8", kJobPageHtml};
      },
      /*public_access=*/true);
  server_->HandleGet(
      "/metrics",
      [this] {
        return net::HttpResponse{200, "text/plain; version=0.0.4", core_->PrometheusText()};
      },
      /*public_access=*/true);
  server_->HandleRpc("/edl.Control/Scale", [this](std::string_view body) -> Result<std::string> {
    int n = 0;
    try {
      n = std::stoi(std::string(body));
    } catch (...) {
      return InvalidArgument("scale: expected a number of workers, got \"" + std::string(body) +
                             "\"");
    }
    if (n < 1 || n > 1000) return InvalidArgument("scale: --num_workers must be 1..1000");
    core_->SetTargetWorkers(n);
    return std::string("scaling to " + std::to_string(n) + " workers");
  });
  server_->HandleRpc("/edl.Control/Stop", [this](std::string_view) -> Result<std::string> {
    RequestStop("stopped by `edl stop`");
    return std::string("stopping");
  });
  if (o.kube.enabled && o.kube.hold_outputs_s > 0) {
    std::map<std::string, std::string> outputs;
    if (!o.output.empty()) outputs["output"] = o.output;
    if (!o.prediction_output.empty()) outputs["prediction_output"] = o.prediction_output;
    auto held = std::make_unique<HeldOutputs>(std::move(outputs));
    held->Serve(*server_);
    std::lock_guard<std::mutex> lock(stop_mu_);  // RequestStop reads held_
    held_ = std::move(held);
  }
  EDL_RETURN_IF_ERROR(server_->Start());
  master_addr_ = o.host + ":" + std::to_string(server_->port());
  if (!o.job.job_dir.empty()) {
    EDL_RETURN_IF_ERROR(
        WriteMasterAddress(JobDirectory{o.job.job_dir}, {o.host, server_->port(), ::getpid()}));
  }
  EDL_LOG(INFO) << "master of job " << o.job.job_name << " listening on " << master_addr_ << "; "
                << mopt_.records.training << " training, " << mopt_.records.validation
                << " validation records; "
                << (o.allreduce ? std::string("AllreduceStrategy, no PS")
                                : std::to_string(o.num_ps) + " PS")
                << ", " << o.num_workers << " workers";
  return Status::Ok();
}

Status MasterJob::ConnectCluster() {
  const MasterProcessOptions& o = o_;
  child_job_ = o.job;
  if (o.kube.enabled) {
    EDL_ASSIGN_OR_RETURN(kube_cluster_, MakeKubeCluster(o, *kube_client_, recovered_));
    processes_ = kube_cluster_.get();
    // Workers reach the master through its Service: the same address
    // whichever master pod serves it.
    const std::string ns =
        o.kube.namespace_name.empty() ? kube_client_->default_namespace() : o.kube.namespace_name;
    const std::string service = o.job.job_name + "-master";
    for (int attempt = 0;; ++attempt) {
      auto s = kube_client_->Get(kube::Services(), ns, service);
      const std::string ip = s.ok() ? kube::StringAt(*s, {"spec", "clusterIP"}) : "";
      if (!ip.empty() && ip != "None") {
        master_addr_ = ip + ":" + std::to_string(server_->port());
        break;
      }
      if (attempt >= 300) {  // the client creates it right after the Job
        return Unavailable("the master's service " + service + " has no cluster IP after 60 s");
      }
      std::this_thread::sleep_for(milliseconds(200));  // polling the API server
    }
    child_job_.job_dir.clear();
    child_job_.secret_file = std::string(cluster::kJobSecretDir) + "/secret";
    EDL_LOG(INFO) << "job " << o.job.job_name << " runs on Kubernetes (" << kube_description_
                  << "), image " << o.kube.image;
  } else if (!o.host_socket.empty()) {
    // `edl train` owns the processes: they outlive this master.
    EDL_ASSIGN_OR_RETURN(own_cluster_, cluster::HostedCluster::Connect(o.host_socket, secret_));
    processes_ = own_cluster_.get();
  } else {
    own_cluster_ = std::make_unique<cluster::LocalCluster>(o.binary);
    processes_ = own_cluster_.get();
  }
  supervisor_ = std::make_unique<cluster::Supervisor>(*processes_, SystemClock(), o.grace_period);
  // The supervisor logs every exit and relaunch itself.
  // A PS that fails while the job stops has failed to write its final
  // checkpoint: the job fails with it.
  supervisor_->OnExit([this](const cluster::ProcessExit& e, bool will_relaunch) {
    if (!ps_names_.count(e.name)) {
      core_->OnWorkerExit(e.name, e.ToString());
      if (will_relaunch) core_->OnReplacementRequested(e.name);
    } else if (stopping_job_ && (e.signaled ? e.code == SIGKILL : e.code != 0)) {
      ps_stop_failures_.push_back(e.ToString());
    } else if (ps_watch_) {
      int index = -1;
      if (std::sscanf(e.name.c_str(), "ps-%d", &index) == 1) ps_watch_->OnExit(index);
    }
    // A failure relaunch may have been used: the next master keeps count.
    if (!stopping_job_ && !e.signaled && e.code != 0) {
      if (Status s = SavePlan(); !s.ok()) EDL_LOG(WARNING) << "processes.json: " << s.message();
    }
  });
  // Workers that failed for good; when every wanted worker has, nobody is
  // left to train and the job fails instead of waiting forever.
  supervisor_->OnGaveUp([this](const std::string& name, const std::string& reason) {
    if (ps_names_.count(name)) {
      core_->Fail(name + " failed for good: " + reason);
      return;
    }
    EDL_LOG(ERROR) << name << ": not relaunched again: " << reason;
    given_up_.insert(name);
    last_give_up_ = name + ": " + reason;
  });
  worker_policy_.max_failure_relaunches = o.relaunch_on_worker_failure;
  return Status::Ok();
}

Status MasterJob::Keep(const cluster::ProcessSpec& spec, const cluster::RelaunchPolicy& policy) {
  const std::vector<std::string> running = processes_->Running();
  Status s;
  if (std::find(running.begin(), running.end(), spec.name) != running.end()) {
    EDL_LOG(INFO) << spec.name << " is still running: adopted";
    s = supervisor_->Adopt(spec, policy);
  } else if (recovered_ && core_->state() != master::JobState::kRunning) {
    // The job had ended: only its ending is left to do, nothing is launched.
    EDL_LOG(INFO) << spec.name << " is gone; the job has ended: not launched again";
    gone_.push_back(spec.name);
    return Status::Ok();
  } else {
    if (recovered_) EDL_LOG(INFO) << spec.name << " is gone: launching it again";
    s = supervisor_->Add(spec, policy);
  }
  // The relaunches after failures the last master allowed it count here too.
  if (s.ok() && plan_.is_object() && plan_.contains("failure_relaunches")) {
    const int used = plan_["failure_relaunches"].value(spec.name, 0);
    if (used > 0) supervisor_->SetFailureRelaunches(spec.name, used);
  }
  return s;
}

Status MasterJob::StartPs() {
  const MasterProcessOptions& o = o_;
  // PS first, on ports fixed for the job so a relaunched PS is found again
  // (by a new master too: the addresses are in the plan).
  const int num_ps = o.allreduce ? 0 : o.num_ps;
  std::vector<std::string> planned;
  if (plan_.is_object() && plan_.contains("ps"))
    planned = plan_["ps"].get<std::vector<std::string>>();
  if (!planned.empty() && static_cast<int>(planned.size()) != num_ps) {
    return FailedPrecondition("the job had " + std::to_string(planned.size()) + " PS, not " +
                              std::to_string(num_ps));
  }
  for (int i = 0; i < num_ps; ++i) {
    PsProcessOptions p;
    if (kube_cluster_) {
      // Each PS pod listens on its own pod IP; a Service gives it an
      // address that survives relaunches.
      p.host = "$(POD_IP)";
      p.port = o.kube.ps_port;
      EDL_ASSIGN_OR_RETURN(std::string address, kube_cluster_->Expose(PsName(i), p.port));
      ps_addrs_.push_back(address);
    } else {
      int port = 0;
      if (!planned.empty()) {
        std::string host;
        EDL_RETURN_IF_ERROR(net::ParseAddress(planned[i], "PS address", &host, &port));
      } else {
        EDL_ASSIGN_OR_RETURN(port, PickFreePort(o.host));
      }
      ps_addrs_.push_back(o.host + ":" + std::to_string(port));
      p.host = o.host;
      p.port = port;
    }
    p.job = child_job_;
    p.model = o.model;
    if (!resolved_input_spec_.empty()) p.model.input_spec = resolved_input_spec_;
    p.model.num_threads = ChildThreads(o, /*ps=*/true, UsableCpus());
    p.ps_index = i;
    p.num_ps = o.num_ps;
    p.use_async = o.use_async;
    p.grads_to_wait = o.grads_to_wait;
    p.sync_version_tolerance = o.sync_version_tolerance;
    p.lr_staleness_modulation = o.lr_staleness_modulation;
    p.checkpoint_dir = o.checkpoint_dir;
    p.checkpoint_steps = o.checkpoint_steps;
    p.keep_checkpoint_max = o.keep_checkpoint_max;
    cluster::RelaunchPolicy policy;
    policy.max_failure_relaunches = 3;
    ps_names_.insert(PsName(i));
    {
      std::lock_guard<std::mutex> lock(ps_info_mu_);
      ps_info_.push_back({{"name", PsName(i)},
                          {"address", ps_addrs_.back()},
                          {"num_threads", p.model.num_threads}});
    }
    EDL_RETURN_IF_ERROR(Keep({PsName(i), ToArgs(p), ChildEnv(o, UserTunedOpenMp())}, policy));
  }
  EDL_RETURN_IF_ERROR(SavePlan());
  for (const std::string& a : ps_addrs_) {
    std::string host;
    int port = 0;
    EDL_RETURN_IF_ERROR(net::ParseAddress(a, "PS address", &host, &port));
    remotes_.push_back(
        std::make_unique<protocol::RemotePs>(host, port, secret_, milliseconds(60000)));
    services_.push_back(remotes_.back().get());
  }
  return Status::Ok();
}

Status MasterJob::WaitForPs() {
  // Until every PS answers (it builds the model and restores first; a PS
  // pod may first wait for capacity).
  const double wait_s = kube_cluster_ ? 900 : 120;
  const double deadline = SystemClock().NowSeconds() + wait_s;
  for (size_t i = 0; i < services_.size() && !stop_requested_; ++i) {
    while (true) {
      supervisor_->Step(milliseconds(50));
      if (core_->state() != master::JobState::kRunning) break;
      auto r = services_[i]->PullDense({-2});
      if (r.ok()) break;
      if (SystemClock().NowSeconds() > deadline) {
        return Unavailable(PsName(static_cast<int>(i)) + " did not come up within " +
                           std::to_string(static_cast<int>(wait_s)) +
                           " s: " + r.status().message());
      }
    }
  }
  return Status::Ok();
}

cluster::ProcessSpec MasterJob::WorkerSpec(int i) const {
  const MasterProcessOptions& o = o_;
  WorkerProcessOptions w;
  w.job = child_job_;
  w.model = o.model;
  if (!resolved_input_spec_.empty()) w.model.input_spec = resolved_input_spec_;
  MasterProcessOptions now = o;  // the worker count may have been scaled
  now.num_workers = std::max(core_->target_workers(), 1);
  w.model.num_threads = ChildThreads(now, /*ps=*/false, UsableCpus());
  w.worker_name = WorkerName(i);
  w.master_addr = master_addr_;
  w.ps_addrs = ps_addrs_;
  w.training_data = training_data_;
  w.validation_data = validation_data_;
  w.prediction_data = prediction_data_;
  w.minibatch_size = o.minibatch_size;
  w.get_model_steps = o.get_model_steps;
  w.gradient_compression = o.gradient_compression;
  w.shuffle = o.shuffle;
  w.master_outage_tolerance_s = o.master_outage_tolerance_s;
  if (o.allreduce) {
    w.allreduce = true;
    w.ring_host = kube_cluster_ ? "$(POD_IP)" : o.host;
    w.allreduce_timeout_s = o.allreduce_timeout_s;
    w.checkpoint_dir = o.checkpoint_dir;
    w.checkpoint_steps = o.checkpoint_steps;
    w.keep_checkpoint_max = o.keep_checkpoint_max;
    w.output = o.output;
  }
  return cluster::ProcessSpec{WorkerName(i), ToArgs(w), ChildEnv(o, UserTunedOpenMp())};
}

Status MasterJob::StartWorkers() {
  // The workers the last master had (none for a new job: the loop launches
  // them): adopted if they still run; a worker that died meanwhile hands
  // back its tasks now and is launched again.
  const std::vector<std::string> running = processes_->Running();
  for (const std::string& name : active_) {
    int index = -1;
    if (std::sscanf(name.c_str(), "worker-%d", &index) != 1 || index < 0) {
      return IoError(state_dir_ + "/processes.json: \"" + name + "\" is not a worker name");
    }
    if (std::find(running.begin(), running.end(), name) == running.end()) {
      core_->OnWorkerExit(name);
    }
    EDL_RETURN_IF_ERROR(Keep(WorkerSpec(index), worker_policy_));
  }
  return Status::Ok();
}

void MasterJob::UpdateEvents() {
  // The progress first: the epoch ends read after it hold every one it includes.
  const master::Progress p = core_->progress();
  events_->Update(p, core_->evaluation_history(), core_->epoch_ends(), SystemClock().NowSeconds());
}

Status MasterJob::RunLoop() {
  const MasterProcessOptions& o = o_;
  // Progress: records trained, rate, ETA, workers; a bar redrawn in place
  // on a terminal (--progress_bar), else a line every --log_interval s.
  JobProgress progress(
      static_cast<double>(mopt_.records.training) * static_cast<double>(o.num_epochs), o.num_epochs,
      o.progress_bar && IsTerminal(STDERR_FILENO), o.log_interval_s);
  if (!services_.empty()) {
    std::vector<std::string> boots;
    if (plan_.is_object() && plan_.contains("ps_boots") && plan_["ps_boots"].is_array()) {
      for (const auto& b : plan_["ps_boots"])
        boots.push_back(b.is_string() ? b.get<std::string>() : "");
    }
    ps_watch_ = std::make_unique<PsWatch>(*core_, ps_addrs_, secret_, boots,
                                          !o.checkpoint_dir.empty() && o.checkpoint_steps > 0);
  }
  while (core_->state() == master::JobState::kRunning && !stop_requested_) {
    progress.Report([&] { return core_->progress(); }, SystemClock().NowSeconds());
    if (kube_cluster_) {
      for (const std::string& name : core_->AwaitingReplacement()) {
        core_->OnPendingReason(name, kube_cluster_->PendingReason(name));
      }
    }
    if (events_ && events_->Due(SystemClock().NowSeconds())) UpdateEvents();
    const int want = core_->target_workers();
    bool changed = false;
    while (static_cast<int>(active_.size()) < want) {
      const int i = next_worker_++;
      EDL_RETURN_IF_ERROR(Keep(WorkerSpec(i), worker_policy_));
      active_.push_back(WorkerName(i));
      changed = true;
    }
    // Scale down: the newest workers finish their minibatch and leave.
    while (static_cast<int>(active_.size()) > want) {
      const std::string name = active_.back();
      active_.pop_back();
      core_->RequestStop(name);
      Status s = supervisor_->Remove(name, SIGTERM);
      if (!s.ok()) EDL_LOG(WARNING) << "scale down " << name << ": " << s.message();
      EDL_LOG(INFO) << "scaling down: " << name << " leaves";
      changed = true;
    }
    if (ps_watch_) {
      bool boots_changed = false;
      ps_boots_ = ps_watch_->KnownBoots(&boots_changed);
      changed = changed || boots_changed;
    }
    if (changed) EDL_RETURN_IF_ERROR(SavePlan());
    SaveIncidents();
    supervisor_->Step(milliseconds(100));
    core_->Tick();
    if (!active_.empty() && std::all_of(active_.begin(), active_.end(), [&](const std::string& n) {
          return given_up_.count(n) > 0;
        })) {
      core_->Fail("every worker failed for good (the last: " + last_give_up_ +
                  "); see the workers' logs");
    }
    if (Status d = core_->durability(); d.code() == StatusCode::kResourceExhausted) {
      core_->Fail(d.message());  // a new master would hit it too
      break;
    } else if (!d.ok()) {
      // The journal cannot be written: this master can no longer keep its
      // promises. It leaves the processes running and exits at once; the
      // job host starts a new master, which continues from what is on disk.
      EDL_LOG(ERROR) << "the master's state cannot be kept (" << d.message()
                     << "); exiting for a new master to take over";
      std::fflush(nullptr);
      ::_exit(kMasterLeavesExitCode);
    }
  }
  progress.Finish();
  ps_watch_.reset();
  SaveIncidents();
  if (events_) UpdateEvents();
  if (leave_) return Status::Ok();
  if (stop_requested_) {
    std::lock_guard<std::mutex> lock(stop_mu_);
    core_->Fail(stop_reason_);
  }
  return Status::Ok();
}

}  // namespace edl::roles::job
