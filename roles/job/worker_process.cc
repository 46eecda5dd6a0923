#include "roles/job/worker_process.h"

#include <atomic>
#include <cstdio>
#include <memory>

#include "base/clock.h"
#include "base/logging.h"
#include "base/signal_watcher.h"
#include "data/source.h"
#include "net/rpc.h"
#include "roles/job/job_secret.h"
#include "roles/local/checkpoint.h"
#include "roles/local/compiled_model.h"
#include "roles/local/model_source.h"
#include "roles/protocol/remote_services.h"
#include "roles/ps/compression.h"
#include "roles/ps/ps_client.h"
#include "roles/worker/allreduce_worker.h"
#include "roles/worker/worker.h"
#include "tensor/ops.h"

namespace edl::roles::job {
Status RunWorkerProcess(const WorkerProcessOptions& o) {
  // Installed first so every thread started below inherits the blocked
  // signals; the worker is created later, so the callback goes through a
  // pointer set once it exists.
  std::atomic<worker::Worker*> running{nullptr};
  std::atomic<worker::AllreduceWorker*> running_ring{nullptr};
  std::atomic<bool> stop_early{false};
  SignalWatcher signals([&](int signo) {
    EDL_LOG(INFO) << o.worker_name << ": signal " << signo << ", stopping after this minibatch";
    stop_early = true;
    if (worker::Worker* w = running.load()) w->RequestStop();
    if (worker::AllreduceWorker* w = running_ring.load()) w->RequestStop();
  });

  EDL_ASSIGN_OR_RETURN(std::string secret, LoadSecret(o.job));
  tensor::SetNumThreads(o.model.num_threads);  // 0: UsableCpus()
  EDL_LOG(DEBUG) << o.worker_name << " options: " << JoinArgs(ToArgs(o));
  // Weights come from the PS (which restore --checkpoint_dir_for_init
  // themselves, in their own layout); the worker only needs the model.
  ModelOptions mo = o.model;
  EDL_ASSIGN_OR_RETURN(mo.checkpoint_dir_for_init, LocalCheckpointPath(mo.checkpoint_dir_for_init));
  // A single-process checkpoint carries the spec (and weights, harmless
  // here); the PS layout is the PS's business.
  if (!IsSingleProcessCheckpoint(mo.checkpoint_dir_for_init)) mo.checkpoint_dir_for_init.clear();
  mo.for_inference = o.training_data.empty();
  mo.class_data = o.training_data;
  EDL_ASSIGN_OR_RETURN(CompiledModel cm, CompileModel(mo));
  std::unique_ptr<data::Source> training, validation, prediction;
  if (!o.training_data.empty()) {
    EDL_ASSIGN_OR_RETURN(training, OpenSourceForModel("--training_data", o.training_data, cm, true,
                                                      JobReading(o.model, /*worker=*/true)));
  }
  if (!o.validation_data.empty()) {
    EDL_ASSIGN_OR_RETURN(validation,
                         OpenSourceForModel("--validation_data", o.validation_data, cm, true,
                                            JobReading(o.model, /*worker=*/true)));
  }
  if (!o.prediction_data.empty()) {
    EDL_ASSIGN_OR_RETURN(prediction,
                         OpenSourceForModel("--prediction_data", o.prediction_data, cm, false,
                                            JobReading(o.model, /*worker=*/true)));
  }

  std::string host;
  int port = 0;
  EDL_RETURN_IF_ERROR(net::ParseAddress(o.master_addr, "--master_addr", &host, &port));
  protocol::RemoteMaster master(host, port, secret, o.rpc_deadline);
  worker::WorkerData data{training.get(), validation.get(), prediction.get()};
  if (o.allreduce) {
    worker::AllreduceWorkerOptions ao;
    ao.name = o.worker_name;
    ao.minibatch_size = o.minibatch_size;
    ao.shuffle = o.shuffle;
    ao.seed = o.model.seed;
    ao.ring_host = o.ring_host;
    ao.secret = secret;
    ao.collective_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(o.allreduce_timeout_s * 1000));
    ao.checkpoint_dir = o.checkpoint_dir;
    ao.checkpoint_steps = o.checkpoint_steps;
    ao.keep_checkpoint_max = o.keep_checkpoint_max;
    ao.output = o.output;
    ao.adapt_threads = o.model.adapt_threads;
    ao.master_outage_tolerance =
        std::chrono::milliseconds(static_cast<int64_t>(o.master_outage_tolerance_s * 1000));
    worker::AllreduceWorker w(ao, cm, data, master, SystemClock());
    running_ring = &w;
    if (stop_early) w.RequestStop();
    Status s = w.Run();
    running_ring = nullptr;
    return s;
  }
  if (o.ps_addrs.empty()) return InvalidArgument("--ps_addrs: at least one PS is needed");
  std::vector<std::unique_ptr<protocol::RemotePs>> remotes;
  std::vector<protocol::PsService*> services;
  for (size_t i = 0; i < o.ps_addrs.size(); ++i) {
    EDL_RETURN_IF_ERROR(
        net::ParseAddress(o.ps_addrs[i], "--ps_addrs[" + std::to_string(i) + "]", &host, &port));
    remotes.push_back(std::make_unique<protocol::RemotePs>(host, port, secret, o.rpc_deadline));
    services.push_back(remotes.back().get());
  }
  EDL_ASSIGN_OR_RETURN(protocol::Compression compression,
                       ps::ParseCompression(o.gradient_compression, "--gradient_compression"));
  ps::PsClient ps(services, compression);

  worker::WorkerOptions wo;
  wo.name = o.worker_name;
  wo.minibatch_size = o.minibatch_size;
  wo.get_model_steps = o.get_model_steps;
  wo.shuffle = o.shuffle;
  wo.seed = o.model.seed;
  wo.adapt_threads = o.model.adapt_threads;
  wo.master_outage_tolerance =
      std::chrono::milliseconds(static_cast<int64_t>(o.master_outage_tolerance_s * 1000));
  worker::Worker w(wo, cm, data, master, ps, SystemClock());
  running = &w;
  if (stop_early) w.RequestStop();
  Status s = w.Run();
  running = nullptr;
  char stalls[48];
  std::snprintf(stalls, sizeof stalls, "%.1f s waiting for input", w.input_stall_seconds());
  EDL_LOG(INFO) << o.worker_name << ": " << w.tasks_done() << " task(s) done, " << stalls
                << (s.ok() ? "" : "; " + s.message());
  return s;
}

}  // namespace edl::roles::job
