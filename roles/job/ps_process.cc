#include "roles/job/ps_process.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "base/file.h"
#include "base/logging.h"
#include "base/signal_watcher.h"
#include "net/rpc.h"
#include "roles/job/job_secret.h"
#include "roles/local/checkpoint.h"
#include "roles/local/compiled_model.h"
#include "roles/protocol/remote_services.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/ps_checkpoint.h"
#include "tensor/ops.h"

namespace edl::roles::job {

Status RunPsProcess(const PsProcessOptions& o) {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  SignalWatcher signals([&](int signo) {
    EDL_LOG(INFO) << "ps-" << o.ps_index << ": signal " << signo << ", stopping";
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  });

  EDL_ASSIGN_OR_RETURN(std::string secret, LoadSecret(o.job));
  tensor::SetNumThreads(o.model.num_threads);  // 0: UsableCpus()
  EDL_LOG(DEBUG) << "ps-" << o.ps_index << " options: " << JoinArgs(ToArgs(o));
  ModelOptions mo = o.model;
  ps::ParameterServerOptions po;
  po.ps_index = o.ps_index;
  po.num_ps = o.num_ps;
  po.use_async = o.use_async;
  po.grads_to_wait = o.grads_to_wait;
  po.sync_version_tolerance = o.sync_version_tolerance;
  po.lr_staleness_modulation = o.lr_staleness_modulation;
  po.checkpoint_dir = o.checkpoint_dir;
  po.checkpoint_steps = o.checkpoint_steps;
  po.keep_checkpoint_max = o.keep_checkpoint_max;
  po.seed = mo.seed;
  // The PS needs no loss; it applies the optimizer to pushed gradients.
  mo.for_inference = true;
  EDL_ASSIGN_OR_RETURN(mo.checkpoint_dir_for_init, LocalCheckpointPath(mo.checkpoint_dir_for_init));
  if (IsSingleProcessCheckpoint(mo.checkpoint_dir_for_init)) {
    // A single-process checkpoint (local training, an --output export): the
    // model restores it and the PS takes its partition, tables included.
    po.tables_from_model = true;
  } else {
    // The PS checkpoint layout (another job's --checkpoint_dir).
    po.checkpoint_dir_for_init = mo.checkpoint_dir_for_init;
    mo.checkpoint_dir_for_init.clear();
  }
  mo.device = "cpu";  // the PS keeps its shard on the host (--device is the workers')
  EDL_ASSIGN_OR_RETURN(CompiledModel cm, CompileModel(mo));
  EDL_ASSIGN_OR_RETURN(auto server_ps, ps::ParameterServer::Create(po, std::move(cm)));

  net::ServerOptions so;
  so.host = o.host;
  so.port = o.port;
  so.secret = secret;
  net::RpcServer server(so);
  protocol::ServePs(*server_ps, server);
  // The master's request for the final checkpoint, once every worker is
  // done: its answer (or error) decides the job's outcome.
  std::atomic<int64_t> saved_version{-1};
  server.HandleRpc(kPsSaveCheckpointPath, [&](std::string_view) -> Result<std::string> {
    if (o.checkpoint_dir.empty()) return FailedPrecondition("no --checkpoint_dir");
    const int64_t version = server_ps->version();
    Status s = server_ps->SaveCheckpoint();
    if (!s.ok()) return s;
    saved_version = version;
    return ps::PartitionPath(o.checkpoint_dir, version, o.ps_index, o.num_ps);
  });
  // What this PS holds of the training tasks, for the master after a restart.
  const std::string boot = [] {
    std::random_device device;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", device(), device());
    return std::string(hex);
  }();
  server.HandleRpc(kPsAppliedPushesPath, [&](std::string_view) -> Result<std::string> {
    // The version first: the state read after it holds at least its pushes.
    const int64_t version = server_ps->version();
    const ps::AppliedPushes::State state = server_ps->applied_pushes().Export();
    nlohmann::json j = {{"boot", boot}, {"version", version}};
    j["taken"] = state.taken;
    j["settled"] = state.settled;
    return j.dump();
  });
  server.HandleRpc(kPsCheckpointHealthPath, [&](std::string_view) -> Result<std::string> {
    const ps::ParameterServer::CheckpointHealth h = server_ps->checkpoint_health();
    return nlohmann::json{{"version", server_ps->version()},
                          {"last_good_version", h.last_good_version},
                          {"failures", h.failures},
                          {"failed_version", h.failed_version},
                          {"error", h.last_error}}
        .dump();
  });
  EDL_RETURN_IF_ERROR(server.Start());
  EDL_LOG(INFO) << "ps-" << o.ps_index << " of " << o.num_ps << ": serving on " << o.host << ":"
                << server.port() << " at version " << server_ps->version() << ", "
                << tensor::NumThreads() << (tensor::NumThreads() == 1 ? " thread" : " threads");
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return stop; });
  }
  server.Stop();
  // Stopped (the job ended, or this PS is preempted or scaled away): its
  // partition is saved unless the master already had it saved at this
  // version. A failure here is the process's failure.
  if (!o.checkpoint_dir.empty() && saved_version.load() != server_ps->version()) {
    Status s = server_ps->SaveCheckpoint();
    if (!s.ok()) return s.WithPrefix("final checkpoint");
    EDL_LOG(INFO) << "ps-" << o.ps_index << ": final checkpoint of version " << server_ps->version()
                  << " written";
  }
  return Status::Ok();
}

Result<PsApplied> ParseAppliedPushes(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("applied pushes: not a JSON object");
  PsApplied out;
  if (!j.contains("boot") || !j["boot"].is_string() || j["boot"].get<std::string>().empty()) {
    return InvalidArgument("applied pushes: \"boot\" must be a non-empty string");
  }
  out.boot = j["boot"].get<std::string>();
  if (!j.contains("version") || !j["version"].is_number_integer()) {
    return InvalidArgument("applied pushes: \"version\" must be an integer");
  }
  out.version = j["version"].get<int64_t>();
  auto pairs = [&](const char* field, std::vector<std::pair<int64_t, int64_t>>* to) -> Status {
    if (!j.contains(field) || !j[field].is_array()) {
      return InvalidArgument(std::string("applied pushes: \"") + field + "\" must be an array");
    }
    for (size_t i = 0; i < j[field].size(); ++i) {
      const nlohmann::json& p = j[field][i];
      if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() ||
          !p[1].is_number_integer()) {
        return InvalidArgument(std::string("applied pushes: \"") + field + "\"[" +
                               std::to_string(i) + "] must be a pair of integers");
      }
      to->emplace_back(p[0].get<int64_t>(), p[1].get<int64_t>());
    }
    return Status::Ok();
  };
  EDL_RETURN_IF_ERROR(pairs("taken", &out.state.taken));
  EDL_RETURN_IF_ERROR(pairs("settled", &out.state.settled));
  // The same checks as a checkpoint's (ids positive, ranges ordered).
  ps::AppliedPushes check;
  if (Status s = check.Import(out.state); !s.ok()) return s;
  return out;
}

namespace {

// One control RPC (empty body) to the PS at `address` (host:port).
Result<std::string> CallPsControl(const std::string& address, const std::string& secret,
                                  const char* path, std::chrono::milliseconds timeout) {
  std::string host;
  int port = 0;
  EDL_RETURN_IF_ERROR(net::ParseAddress(address, "PS address", &host, &port));
  net::RpcChannel channel(host, port, secret);
  return channel.Call(path, "", timeout);
}

}  // namespace

Result<PsApplied> ReadAppliedPushes(const std::string& address, const std::string& secret,
                                    std::chrono::milliseconds timeout) {
  EDL_ASSIGN_OR_RETURN(std::string answer,
                       CallPsControl(address, secret, kPsAppliedPushesPath, timeout));
  return ParseAppliedPushes(answer);
}

Result<PsCheckpointHealth> ParseCheckpointHealth(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("checkpoint health: not a JSON object");
  PsCheckpointHealth h;
  for (auto [field, to] : {std::pair<const char*, int64_t*>{"version", &h.version},
                           {"last_good_version", &h.last_good_version},
                           {"failures", &h.failures},
                           {"failed_version", &h.failed_version}}) {
    if (!j.contains(field) || !j[field].is_number_integer()) {
      return InvalidArgument(std::string("checkpoint health: \"") + field +
                             "\" must be an integer");
    }
    *to = j[field].get<int64_t>();
  }
  if (!j.contains("error") || !j["error"].is_string()) {
    return InvalidArgument("checkpoint health: \"error\" must be a string");
  }
  h.error = j["error"].get<std::string>();
  if (h.failures < 0) return InvalidArgument("checkpoint health: \"failures\" is negative");
  return h;
}

Result<PsCheckpointHealth> ReadCheckpointHealth(const std::string& address,
                                                const std::string& secret,
                                                std::chrono::milliseconds timeout) {
  EDL_ASSIGN_OR_RETURN(std::string answer,
                       CallPsControl(address, secret, kPsCheckpointHealthPath, timeout));
  return ParseCheckpointHealth(answer);
}

// Each PS in turn, while the master waits; the first failure is returned.
Status SaveFinalCheckpoints(const std::vector<std::string>& ps_addrs, const std::string& secret) {
  for (size_t i = 0; i < ps_addrs.size(); ++i) {
    auto r = CallPsControl(ps_addrs[i], secret, kPsSaveCheckpointPath,
                           std::chrono::milliseconds(600000));
    if (!r.ok()) {
      return r.status().WithPrefix("final checkpoint: ps-" + std::to_string(i));
    }
    EDL_LOG(INFO) << "ps-" << i << " wrote its final checkpoint to " << *r;
  }
  return Status::Ok();
}

}  // namespace edl::roles::job
