#include "roles/job/master_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/clock.h"
#include "base/cpus.h"
#include "base/file.h"
#include "base/logging.h"
#include "base/signal_watcher.h"
#include "data/source.h"
#include "net/rpc.h"
#include "kube/client.h"
#include "kube/config.h"
#include "roles/cluster/kube_cluster.h"
#include "roles/cluster/kube_resources.h"
#include "roles/cluster/local_cluster.h"
#include "roles/cluster/supervisor.h"
#include "roles/compiled_model.h"
#include "roles/evaluation.h"
#include "roles/job/job_progress.h"
#include "roles/job/master_cluster.h"
#include "roles/job/prediction_parts.h"
#include "roles/job/ps_process.h"
#include "roles/job_dir.h"
#include "roles/master/master_core.h"
#include "roles/model_export.h"
#include "roles/prediction.h"
#include "roles/progress.h"
#include "roles/protocol/remote_services.h"
#include "roles/ps/ps_client.h"
#include "tensor/ops.h"

namespace edl::roles::job {
namespace {

using std::chrono::milliseconds;

// How long a stopping PS may take to write its final checkpoint.
constexpr milliseconds kPsCheckpointGrace{600000};

// The records of a data set, per file, from the files' record indexes (built
// here when missing or stale, so the workers find them fresh); the master
// never decodes the data itself.
Status CountRecords(const std::string& flag, const std::string& path, const CompiledModel& cm,
                    bool labels, const ModelOptions& model, int64_t* records,
                    std::vector<int64_t>* files) {
  if (path.empty()) return Status::Ok();
  EDL_ASSIGN_OR_RETURN(auto source,
                       OpenSourceForModel(flag, path, cm, labels, JobReading(model, /*worker=*/false)));
  *records = source->num_records();
  *files = source->file_records();
  EDL_LOG(INFO) << flag << " " << path << ": " << *records << " records in " << files->size()
                << (files->size() == 1 ? " file" : " files");
  return Status::Ok();
}

std::string PsName(int i) { return "ps-" + std::to_string(i); }
std::string WorkerName(int i) { return "worker-" + std::to_string(i); }

}  // namespace

Status RunMasterProcess(const MasterProcessOptions& o) {
  std::atomic<bool> stop_requested{false};
  std::string stop_reason;
  std::mutex stop_mu;
  auto request_stop = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(stop_mu);
    if (!stop_requested) stop_reason = why;
    stop_requested = true;
  };
  SignalWatcher signals([&](int signo) {
    request_stop(std::string("stopped by signal ") + (signo == SIGINT ? "SIGINT" : "SIGTERM"));
  });

  if (o.num_workers < 1) return InvalidArgument("--num_workers must be at least 1");
  if (!o.allreduce && o.num_ps < 1) {
    return InvalidArgument("--num_ps_pods must be at least 1 for ParameterServerStrategy");
  }
  EDL_ASSIGN_OR_RETURN(std::string secret, LoadSecret(o.job));
  tensor::SetNumThreads(o.model.num_threads);  // 0: UsableCpus()
  EDL_LOG(DEBUG) << "master options: " << JoinArgs(ToArgs(o));
  ModelOptions mo = o.model;
  // A single-process checkpoint carries the spec (and weights, harmless
  // here); the PS layout is the PS's business.
  if (!IsSingleProcessCheckpoint(mo.checkpoint_dir_for_init)) mo.checkpoint_dir_for_init.clear();
  mo.for_inference = o.training_data.empty();
  mo.device = "cpu";  // the master only reads the spec; --device is the workers'
  EDL_ASSIGN_OR_RETURN(CompiledModel cm, CompileModel(mo));

  master::MasterOptions mopt;
  mopt.job_name = o.job.job_name;
  master::DatasetSizes& r = mopt.records;
  EDL_RETURN_IF_ERROR(CountRecords("--training_data", o.training_data, cm, true, o.model,
                                   &r.training, &r.training_files));
  EDL_RETURN_IF_ERROR(CountRecords("--validation_data", o.validation_data, cm, true, o.model,
                                   &r.validation, &r.validation_files));
  EDL_RETURN_IF_ERROR(CountRecords("--prediction_data", o.prediction_data, cm, false, o.model,
                                   &r.prediction, &r.prediction_files));
  mopt.minibatch_size = o.minibatch_size;
  // AllreduceStrategy: a task is one member's share of one step.
  mopt.num_minibatches_per_task = o.allreduce ? 1 : o.num_minibatches_per_task;
  if (o.allreduce) {
    mopt.ring_start_members = o.num_workers;
    mopt.ring_start_timeout_s = o.kube.enabled ? 600 : 120;
  }
  mopt.num_epochs = o.num_epochs;
  mopt.evaluation_steps = o.evaluation_steps;
  mopt.heartbeat_timeout_s = o.heartbeat_timeout_s;
  mopt.seed = o.model.seed;
  mopt.shuffle = o.shuffle;
  mopt.target_workers = 0;
  mopt.make_metrics = [&cm] { return cm.MakeMetrics(); };
  // Prediction outputs go to disk task by task as the core accepts them.
  std::unique_ptr<PredictionParts> prediction_parts;
  if (!o.prediction_output.empty() && r.prediction > 0) {
    auto parts = PredictionParts::Open(
        o.prediction_output, [&cm](const tensor::Tensor& rows) { return PredictionCsv(cm, rows); });
    if (!parts.ok()) return parts.status().WithPrefix("--prediction_output");
    prediction_parts = std::move(*parts);
    mopt.store_predictions = [p = prediction_parts.get()](int64_t begin, int64_t end,
                                                          const tensor::Tensor& rows) {
      return p->Put(begin, end, rows);
    };
  }
  EDL_ASSIGN_OR_RETURN(auto core, master::MasterCore::Create(mopt, SystemClock()));

  // RPC service, status API and job control on one port.
  std::atomic<int> wanted_workers{o.num_workers};
  net::ServerOptions so;
  so.host = o.host;
  so.port = o.port;
  so.secret = secret;
  net::RpcServer server(so);
  protocol::ServeMaster(*core, server);
  // On Kubernetes the client reads /status through the API server's
  // service proxy, which carries no job secret; Kubernetes RBAC on
  // services/proxy guards it there.
  // The PS are the master's own children: their thread counts are the ones
  // it launched them with (the workers report theirs when they register).
  std::mutex ps_info_mu;
  nlohmann::json ps_info = nlohmann::json::array();
  server.HandleGet("/status", [&] {
    nlohmann::json st = nlohmann::json::parse(core->StatusJson(), nullptr, false);
    if (!st.is_object()) return net::HttpResponse{200, "application/json", core->StatusJson()};
    {
      std::lock_guard<std::mutex> lock(ps_info_mu);
      st["ps"] = ps_info;
    }
    return net::HttpResponse{200, "application/json", st.dump()};
  }, /*public_access=*/o.kube.enabled);
  server.HandleGet("/metrics", [&] {
    return net::HttpResponse{200, "text/plain; version=0.0.4", core->PrometheusText()};
  }, /*public_access=*/true);
  server.HandleRpc("/edl.Control/Scale", [&](std::string_view body) -> Result<std::string> {
    int n = 0;
    try {
      n = std::stoi(std::string(body));
    } catch (...) {
      return InvalidArgument("scale: expected a number of workers, got \"" +
                             std::string(body) + "\"");
    }
    if (n < 1 || n > 1000) return InvalidArgument("scale: --num_workers must be 1..1000");
    wanted_workers = n;
    return std::string("scaling to " + std::to_string(n) + " workers");
  });
  server.HandleRpc("/edl.Control/Stop", [&](std::string_view) -> Result<std::string> {
    request_stop("stopped by `edl stop`");
    return std::string("stopping");
  });
  EDL_RETURN_IF_ERROR(server.Start());
  const std::string master_addr = o.host + ":" + std::to_string(server.port());
  if (!o.job.job_dir.empty()) {
    EDL_RETURN_IF_ERROR(WriteMasterAddress(JobDirectory{o.job.job_dir},
                                           {o.host, server.port(), ::getpid()}));
  }
  EDL_LOG(INFO) << "master of job " << o.job.job_name << " listening on " << master_addr
                << "; " << mopt.records.training << " training, " << mopt.records.validation
                << " validation records; "
                << (o.allreduce ? std::string("AllreduceStrategy, no PS")
                                : std::to_string(o.num_ps) + " PS")
                << ", " << o.num_workers << " workers";

  // Where the PS and workers run: child processes, or pods.
  std::unique_ptr<kube::Client> kube_client;
  std::unique_ptr<cluster::KubeCluster> kube_cluster;
  std::unique_ptr<cluster::Cluster> local_cluster;
  cluster::Cluster* processes = nullptr;
  JobAccess child_job = o.job;
  if (o.kube.enabled) {
    EDL_ASSIGN_OR_RETURN(kube::ClusterConfig config,
                         kube::LoadConfig(o.kube.kubeconfig, o.kube.context));
    EDL_ASSIGN_OR_RETURN(kube_client, kube::Client::Create(config));
    EDL_ASSIGN_OR_RETURN(kube_cluster, MakeKubeCluster(o, *kube_client));
    processes = kube_cluster.get();
    child_job.job_dir.clear();
    child_job.secret_file = std::string(cluster::kJobSecretDir) + "/secret";
    EDL_LOG(INFO) << "job " << o.job.job_name << " runs on Kubernetes (" << config.description
                  << "), image " << o.kube.image;
  } else {
    local_cluster = std::make_unique<cluster::LocalCluster>(o.binary);
    processes = local_cluster.get();
  }
  cluster::Supervisor supervisor(*processes, SystemClock(), o.grace_period);
  std::set<std::string> ps_names;
  // The supervisor logs every exit and relaunch itself.
  // A PS that fails while the job stops has failed to write its final
  // checkpoint: the job fails with it.
  bool stopping_job = false;
  std::vector<std::string> ps_stop_failures;
  supervisor.OnExit([&](const cluster::ProcessExit& e, bool) {
    if (!ps_names.count(e.name)) {
      core->OnWorkerExit(e.name);
    } else if (stopping_job && (e.signaled ? e.code == SIGKILL : e.code != 0)) {
      ps_stop_failures.push_back(e.ToString());
    }
  });
  // Workers that failed for good; when every wanted worker has, nobody is
  // left to train and the job fails instead of waiting forever.
  std::set<std::string> given_up;
  std::string last_give_up;
  supervisor.OnGaveUp([&](const std::string& name, const std::string& reason) {
    if (ps_names.count(name)) {
      core->Fail(name + " failed for good: " + reason);
      return;
    }
    EDL_LOG(ERROR) << name << ": not relaunched again: " << reason;
    given_up.insert(name);
    last_give_up = name + ": " + reason;
  });

  // PS first, on ports fixed for the job so a relaunched PS is found again.
  std::vector<std::string> ps_addrs;
  const int num_ps = o.allreduce ? 0 : o.num_ps;
  for (int i = 0; i < num_ps; ++i) {
    PsProcessOptions p;
    if (kube_cluster) {
      // Each PS pod listens on its own pod IP; a Service gives it an
      // address that survives relaunches.
      p.host = "$(POD_IP)";
      p.port = o.kube.ps_port;
      EDL_ASSIGN_OR_RETURN(std::string address, kube_cluster->Expose(PsName(i), p.port));
      ps_addrs.push_back(address);
    } else {
      EDL_ASSIGN_OR_RETURN(int port, PickFreePort(o.host));
      ps_addrs.push_back(o.host + ":" + std::to_string(port));
      p.host = o.host;
      p.port = port;
    }
    p.job = child_job;
    p.model = o.model;
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
    ps_names.insert(PsName(i));
    {
      std::lock_guard<std::mutex> lock(ps_info_mu);
      ps_info.push_back({{"name", PsName(i)},
                         {"address", ps_addrs.back()},
                         {"num_threads", p.model.num_threads}});
    }
    EDL_RETURN_IF_ERROR(supervisor.Add({PsName(i), ToArgs(p), {}}, policy));
  }
  std::vector<std::unique_ptr<protocol::RemotePs>> remotes;
  std::vector<protocol::PsService*> services;
  for (const std::string& a : ps_addrs) {
    std::string host;
    int port = 0;
    EDL_RETURN_IF_ERROR(net::ParseAddress(a, "PS address", &host, &port));
    remotes.push_back(std::make_unique<protocol::RemotePs>(host, port, secret, milliseconds(60000)));
    services.push_back(remotes.back().get());
  }
  // Wait until every PS answers (it builds the model and restores first;
  // a PS pod may first wait for capacity).
  const double ps_wait_s = kube_cluster ? 900 : 120;
  const double ps_deadline = SystemClock().NowSeconds() + ps_wait_s;
  for (size_t i = 0; i < services.size() && !stop_requested; ++i) {
    while (true) {
      supervisor.Step(milliseconds(50));
      if (core->state() != master::JobState::kRunning) break;
      auto r = services[i]->PullDense({-2});
      if (r.ok()) break;
      if (SystemClock().NowSeconds() > ps_deadline) {
        return Unavailable(PsName(static_cast<int>(i)) + " did not come up within " +
                           std::to_string(static_cast<int>(ps_wait_s)) + " s: " +
                           r.status().message());
      }
    }
  }

  auto worker_spec = [&](int i) {
    WorkerProcessOptions w;
    w.job = child_job;
    w.model = o.model;
    MasterProcessOptions now = o;  // the worker count may have been scaled
    now.num_workers = std::max(wanted_workers.load(), 1);
    w.model.num_threads = ChildThreads(now, /*ps=*/false, UsableCpus());
    w.worker_name = WorkerName(i);
    w.master_addr = master_addr;
    w.ps_addrs = ps_addrs;
    w.training_data = o.training_data;
    w.validation_data = o.validation_data;
    w.prediction_data = o.prediction_data;
    w.minibatch_size = o.minibatch_size;
    w.get_model_steps = o.get_model_steps;
    w.shuffle = o.shuffle;
    if (o.allreduce) {
      w.allreduce = true;
      w.ring_host = kube_cluster ? "$(POD_IP)" : o.host;
      w.allreduce_timeout_s = o.allreduce_timeout_s;
      w.checkpoint_dir = o.checkpoint_dir;
      w.checkpoint_steps = o.checkpoint_steps;
      w.keep_checkpoint_max = o.keep_checkpoint_max;
      w.output = o.output;
    }
    return cluster::ProcessSpec{WorkerName(i), ToArgs(w), {}};
  };
  cluster::RelaunchPolicy worker_policy;
  worker_policy.max_failure_relaunches = o.relaunch_on_worker_failure;
  int next_worker = 0;
  std::vector<std::string> active;

  // Progress: records trained, rate, ETA, workers; a bar redrawn in place
  // on a terminal (--progress_bar), else a line every --log_interval s.
  JobProgress progress(static_cast<double>(mopt.records.training) *
                           static_cast<double>(o.num_epochs),
                       o.num_epochs, o.progress_bar && IsTerminal(STDERR_FILENO),
                       o.log_interval_s);
  auto report_progress = [&] {
    progress.Report([&] { return core->StatusJson(); }, SystemClock().NowSeconds());
  };

  // The job loop.
  while (core->state() == master::JobState::kRunning && !stop_requested) {
    report_progress();
    const int want = wanted_workers.load();
    while (static_cast<int>(active.size()) < want) {
      const int i = next_worker++;
      EDL_RETURN_IF_ERROR(supervisor.Add(worker_spec(i), worker_policy));
      active.push_back(WorkerName(i));
    }
    if (static_cast<int>(active.size()) > want) {
      // Scale down: the newest workers finish their minibatch and leave.
      while (static_cast<int>(active.size()) > want) {
        const std::string name = active.back();
        active.pop_back();
        core->RequestStop(name);
        Status s = supervisor.Remove(name, SIGTERM);
        if (!s.ok()) EDL_LOG(WARNING) << "scale down " << name << ": " << s.message();
        EDL_LOG(INFO) << "scaling down: " << name << " leaves";
      }
    }
    supervisor.Step(milliseconds(100));
    core->Tick();
    if (!active.empty() && std::all_of(active.begin(), active.end(), [&](const std::string& n) {
          return given_up.count(n) > 0;
        })) {
      core->Fail("every worker failed for good (the last: " + last_give_up +
                 "); see the workers' logs");
    }
  }

  progress.Finish();
  Status result;
  if (stop_requested) {
    std::lock_guard<std::mutex> lock(stop_mu);
    core->Fail(stop_reason);
  }
  if (core->state() == master::JobState::kSucceeded && o.allreduce) {
    // Every member holds the final model; the ring's rank 0 exports it once
    // every member is done, and the workers then exit by themselves.
    const double deadline = SystemClock().NowSeconds() + 120;
    while (!processes->Running().empty() && SystemClock().NowSeconds() < deadline) {
      supervisor.Step(milliseconds(100));
    }
    if (!processes->Running().empty()) {
      EDL_LOG(WARNING) << "workers still running 120 s after the last task; stopping them";
    }
    if (!o.output.empty() && !std::filesystem::exists(o.output)) {
      result = Internal("the ring's rank 0 did not export the model to " + o.output +
                        " (see the workers' logs)");
    } else if (!o.output.empty()) {
      EDL_LOG(INFO) << "the ring exported the trained model to " << o.output;
    }
  } else if (core->state() == master::JobState::kSucceeded) {
    if (!o.checkpoint_dir.empty()) result = SaveFinalCheckpoints(ps_addrs, secret);
    // The final model: every PS's partition pulled into the master's model.
    ps::PsClient client(services);
    Status pulled = result.ok() ? client.PullDense(cm.model->parameters()) : result;
    for (const auto& e : cm.model->EmbeddingInputs()) {
      if (!pulled.ok()) break;
      const int64_t rows = e.table->value.dim(0);
      std::vector<int64_t> ids(rows);
      for (int64_t r = 0; r < rows; ++r) ids[r] = r;
      pulled = client.PullRows(*e.table, tensor::Tensor::FromInts({rows}, ids));
    }
    if (!result.ok()) {
      // The final checkpoint failed: nothing more to do.
    } else if (pulled.ok()) {
      cm.optimizer->set_iterations(core->model_version());
      cm.epoch = o.num_epochs;
      if (!o.output.empty()) {
        result = ExportModel(cm, o.output);
        if (result.ok()) EDL_LOG(INFO) << "exported the trained model to " << o.output;
      }
      if (result.ok() && prediction_parts) {
        result = core->PredictionsComplete();
        if (result.ok()) result = prediction_parts->Finish(mopt.records.prediction);
        if (result.ok()) {
          EDL_LOG(INFO) << "wrote the predictions of " << mopt.records.prediction
                        << " records to " << o.prediction_output;
        }
      }
    } else {
      result = pulled.WithPrefix("pulling the final model from the PS");
    }
  } else {
    result = Internal(core->failure_reason());
  }
  // Stop every process; workers have mostly left by themselves already. A
  // PS writes its partition on SIGTERM (unless saved above), so it gets the
  // time a checkpoint may take before any SIGKILL.
  stopping_job = true;
  const milliseconds ps_grace =
      o.checkpoint_dir.empty() ? o.grace_period : std::max(o.grace_period, kPsCheckpointGrace);
  for (const std::string& name : ps_names) {
    Status s = supervisor.Remove(name, SIGTERM, ps_grace);
    (void)s;  // NotFound: it has exited already
  }
  supervisor.RemoveAll(SIGTERM);
  const double stop_deadline = SystemClock().NowSeconds() +
                               std::max(o.grace_period, ps_grace).count() / 1000.0 + 5;
  while (!processes->Running().empty() && SystemClock().NowSeconds() < stop_deadline) {
    supervisor.Step(milliseconds(100));
  }
  if (result.ok() && !ps_stop_failures.empty()) {
    result = Internal(ps_stop_failures.front() + " while stopping (see its log: its final "
                      "checkpoint may have failed)");
  }
  if (kube_cluster) kube_cluster->DeleteServices();
  if (!result.ok()) core->FailEnding(result.message());
  server.Stop();
  std::printf("%s\n", core->FinalReport().c_str());
  std::fflush(stdout);
  return result;
}

}  // namespace edl::roles::job
