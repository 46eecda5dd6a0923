// MasterJob::Prepare (roles/job/master_job.h): the job's inputs checked and
// counted, its state found (a new master continues it) and its core built,
// before any process starts.
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
#include "roles/job/job_secret.h"
#include "roles/job/master_cluster.h"
#include "roles/job/master_job.h"
#include "roles/job/master_process.h"
#include "roles/job/state_configmap.h"
#include "roles/job_dir.h"
#include "roles/local/checkpoint.h"
#include "roles/local/model_export.h"
#include "roles/local/model_source.h"
#include "roles/local/prediction.h"
#include "roles/progress.h"
#include "tensor/ops.h"

namespace edl::roles::job {
namespace {

// The records of a data set, per file, from the files' record indexes (built
// here when missing or stale, so the workers find them fresh); the master
// never decodes the data itself.
Status CountRecords(const std::string& flag, const std::string& path, const CompiledModel& cm,
                    bool labels, const ModelOptions& model, int64_t* records,
                    std::vector<int64_t>* files, std::string* reopen) {
  *reopen = path;
  if (path.empty()) return Status::Ok();
  EDL_ASSIGN_OR_RETURN(
      auto source, OpenSourceForModel(flag, path, cm, labels, JobReading(model, /*worker=*/false)));
  *records = source->num_records();
  *files = source->file_records();
  *reopen = source->reopen_name();
  EDL_LOG(INFO) << flag << " " << path << ": " << *records << " records in " << files->size()
                << (files->size() == 1 ? " file" : " files");
  return Status::Ok();
}

// A restarted master must read the rows the first one planned (a database
// table's rows may have been added since): the names the workers open are
// kept beside the state when the job starts and opened again by every
// later master, which counts those (data/sql_source.h).
Status KeepDataPlan(const std::string& state_dir, const CompiledModel& cm,
                    const ModelOptions& model, master::DatasetSizes* r, std::string* training,
                    std::string* validation, std::string* prediction) {
  const std::string path = state_dir + "/data_plan.json";
  auto saved = ReadFile(path);
  if (!saved.ok()) {
    nlohmann::json j = {
        {"training", *training}, {"validation", *validation}, {"prediction", *prediction}};
    return WriteFileAtomically(path, j.dump());
  }
  const nlohmann::json j = nlohmann::json::parse(*saved, nullptr, false);
  if (!j.is_object()) return IoError(path + ": not the job's data plan (" + *saved + ")");
  struct Set {
    const char* key;
    const char* flag;
    bool labels;
    std::string* name;
    int64_t* records;
    std::vector<int64_t>* files;
  };
  const Set sets[] = {
      {"training", "--training_data", true, training, &r->training, &r->training_files},
      {"validation", "--validation_data", true, validation, &r->validation, &r->validation_files},
      {"prediction", "--prediction_data", false, prediction, &r->prediction, &r->prediction_files},
  };
  for (const Set& set : sets) {
    const auto it = j.find(set.key);
    if (it == j.end() || !it->is_string()) {
      return IoError(path + ": no \"" + set.key + "\" (not the job's data plan)");
    }
    const std::string was = it->get<std::string>();
    if (was == *set.name) continue;
    EDL_LOG(INFO) << set.flag << ": reading the rows the job planned when it started";
    EDL_RETURN_IF_ERROR(
        CountRecords(set.flag, was, cm, set.labels, model, set.records, set.files, set.name));
  }
  return Status::Ok();
}

// "--name=value" -> name: value.
std::map<std::string, std::string> FlagMap(const std::vector<std::string>& args) {
  std::map<std::string, std::string> flags;
  for (const std::string& a : args) {
    if (a.rfind("--", 0) != 0) continue;
    const size_t eq = a.find('=');
    flags[a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
        eq == std::string::npos ? "" : a.substr(eq + 1);
  }
  return flags;
}

// A master restarted on a job's state must run that job: its flags are
// kept beside the state at the first start and compared at every other.
Status CheckFlags(const std::string& state_dir, const std::vector<std::string>& args) {
  const std::string path = state_dir + "/flags";
  std::vector<std::string> mine;
  for (const std::string& a : args) {
    // Where the master listens (a new pod's IP), where the processes run
    // and how the master logs may change.
    if (a.rfind("--host=", 0) == 0 || a.rfind("--host_socket=", 0) == 0 ||
        a.rfind("--progress_bar=", 0) == 0 || a.rfind("--log_interval=", 0) == 0 ||
        a.rfind("--log_level=", 0) == 0) {
      continue;
    }
    mine.push_back(a);
  }
  std::string text;
  for (const std::string& a : mine) text += a + "\n";
  if (!std::filesystem::exists(path)) return WriteFileAtomically(path, text);
  EDL_ASSIGN_OR_RETURN(std::string before, ReadFile(path));
  std::vector<std::string> theirs;
  for (size_t start = 0; start < before.size();) {
    const size_t nl = before.find('\n', start);
    theirs.push_back(before.substr(start, nl - start));
    start = nl == std::string::npos ? before.size() : nl + 1;
  }
  const auto a = FlagMap(theirs), b = FlagMap(mine);
  for (const auto& [name, value] : b) {
    auto it = a.find(name);
    const std::string was = it == a.end() ? "(not given)" : "\"" + it->second + "\"";
    if (it == a.end() || it->second != value) {
      return FailedPrecondition("--" + name + " is \"" + value + "\" but was " + was +
                                " when job's master started (" + path +
                                "): a restarted master must be given the job's flags");
    }
  }
  for (const auto& [name, value] : a) {
    if (!b.count(name)) {
      return FailedPrecondition("--" + name + " was \"" + value +
                                "\" when the job's master started (" + path +
                                ") and is not given now");
    }
  }
  return Status::Ok();
}

// Whether `dir` holds a job's journal (a master continues that job).
bool HasMasterState(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "snapshot" || name.rfind("journal-", 0) == 0) return true;
  }
  return false;
}

}  // namespace

Status MasterJob::Prepare() {
  const MasterProcessOptions& o = o_;
  if (o.num_workers < 1) return InvalidArgument("--num_workers must be at least 1");
  if (!o.allreduce && o.num_ps < 1) {
    return InvalidArgument("--num_ps_pods must be at least 1 for ParameterServerStrategy");
  }
  EDL_ASSIGN_OR_RETURN(secret_, LoadSecret(o.job));
  tensor::SetNumThreads(o.model.num_threads);  // 0: UsableCpus()
  EDL_LOG(DEBUG) << "master options: " << JoinArgs(ToArgs(o));
  ModelOptions mo = o.model;
  EDL_ASSIGN_OR_RETURN(mo.checkpoint_dir_for_init, LocalCheckpointPath(mo.checkpoint_dir_for_init));
  // A single-process checkpoint carries the spec (and weights, harmless
  // here); the PS layout is the PS's business.
  if (!IsSingleProcessCheckpoint(mo.checkpoint_dir_for_init)) mo.checkpoint_dir_for_init.clear();
  mo.for_inference = o.training_data.empty();
  mo.class_data = o.training_data;
  mo.device = "cpu";  // the master only reads the spec; --device is the workers'
  EDL_ASSIGN_OR_RETURN(CompiledModel cm, CompileModel(mo));
  cm_ = std::make_unique<CompiledModel>(std::move(cm));
  if (cm_->input.format == data::DataFormat::kImages) {
    resolved_input_spec_ = data::InputSpecToJson(cm_->input);
  }

  master::MasterOptions& m = mopt_;
  m.job_name = o.job.job_name;
  master::DatasetSizes& r = m.records;
  EDL_RETURN_IF_ERROR(CountRecords("--training_data", o.training_data, *cm_, true, o.model,
                                   &r.training, &r.training_files, &training_data_));
  EDL_RETURN_IF_ERROR(CountRecords("--validation_data", o.validation_data, *cm_, true, o.model,
                                   &r.validation, &r.validation_files, &validation_data_));
  EDL_RETURN_IF_ERROR(CountRecords("--prediction_data", o.prediction_data, *cm_, false, o.model,
                                   &r.prediction, &r.prediction_files, &prediction_data_));
  m.minibatch_size = o.minibatch_size;
  // AllreduceStrategy: a task is one member's share of one step.
  m.num_minibatches_per_task = o.allreduce ? 1 : o.num_minibatches_per_task;
  if (o.allreduce) {
    m.ring_start_members = o.num_workers;
    m.ring_start_timeout_s = o.kube.enabled ? 600 : 120;
  }
  m.num_epochs = o.num_epochs;
  m.evaluation_steps = o.evaluation_steps;
  m.heartbeat_timeout_s = o.heartbeat_timeout_s;
  m.seed = o.model.seed;
  m.shuffle = o.shuffle;
  m.target_workers = o.num_workers;
  if (!o.allreduce && !o.checkpoint_dir.empty()) m.checkpoint_steps = o.checkpoint_steps;
  m.max_failed_checkpoint_intervals = o.max_failed_checkpoint_intervals;
  m.make_metrics = [cm = cm_.get()] { return cm->MakeMetrics(); };
  // The durable state: in the job directory on this machine; on Kubernetes
  // on the checkpoint volume, else in a directory of this pod copied to a
  // ConfigMap (docs/kubernetes.md).
  state_dir_ = MasterStateDir(o);
  if (o.kube.enabled) {
    EDL_ASSIGN_OR_RETURN(kube::ClusterConfig config,
                         kube::LoadConfig(o.kube.kubeconfig, o.kube.context));
    kube_description_ = config.description;
    EDL_ASSIGN_OR_RETURN(kube_client_, kube::Client::Create(config));
  }
  if (o.kube.enabled && state_dir_.empty()) {
    const std::string ns =
        o.kube.namespace_name.empty() ? kube_client_->default_namespace() : o.kube.namespace_name;
    EDL_ASSIGN_OR_RETURN(nlohmann::json owner, MasterJobOwner(*kube_client_, ns, o.kube.pod_name));
    state_configmap_ = std::make_unique<StateConfigMap>(*kube_client_, ns,
                                                        o.job.job_name + "-master-state", owner);
    char dir[] = "/tmp/edl-master-state-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return IoError("cannot create a directory in /tmp");
    state_dir_ = dir;
    EDL_ASSIGN_OR_RETURN(bool restored, state_configmap_->Restore(state_dir_));
    EDL_LOG(INFO) << "the master's state is kept in ConfigMap " << o.job.job_name << "-master-state"
                  << (restored ? " (restored)" : "");
    m.after_state_write = [this] { return state_configmap_->Save(state_dir_); };
    // Compaction keeps it far under the 1 MiB limit, and each write small.
    m.snapshot_min_bytes = 16 << 10;
  }
  // Prediction outputs go to disk task by task as the core accepts them; a
  // master continuing the job keeps the parts the last one wrote.
  if (!o.prediction_output.empty() && r.prediction > 0) {
    auto parts = PredictionParts::Open(
        o.prediction_output,
        [cm = cm_.get()](const tensor::Tensor& rows) { return PredictionCsv(*cm, rows); },
        /*resume=*/!state_dir_.empty() && HasMasterState(state_dir_));
    if (!parts.ok()) return parts.status().WithPrefix("--prediction_output");
    prediction_parts_ = std::move(*parts);
    m.store_predictions = [p = prediction_parts_.get()](int64_t begin, int64_t end,
                                                        const tensor::Tensor& rows) {
      return p->Put(begin, end, rows);
    };
  }
  if (!state_dir_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(state_dir_, ec);
    if (ec) return IoError(state_dir_ + ": cannot create: " + ec.message());
    EDL_RETURN_IF_ERROR(CheckFlags(state_dir_, ToArgs(o)));
    EDL_RETURN_IF_ERROR(KeepDataPlan(state_dir_, *cm_, o.model, &m.records, &training_data_,
                                     &validation_data_, &prediction_data_));
    if (state_configmap_) EDL_RETURN_IF_ERROR(state_configmap_->Save(state_dir_));
    m.state_dir = state_dir_;
    if (auto plan = ReadFile(state_dir_ + "/processes.json"); plan.ok()) {
      plan_ = nlohmann::json::parse(*plan, nullptr, false);
      if (!plan_.is_object() || !plan_["workers"].is_array() ||
          !plan_["next_worker"].is_number_integer()) {
        return IoError(state_dir_ + "/processes.json: not the job's processes (" + *plan +
                       "); they cannot be found again");
      }
      next_worker_ = plan_["next_worker"].get<int>();
      for (const auto& w : plan_["workers"]) {
        if (w.is_string()) active_.push_back(w.get<std::string>());
      }
    }
  }
  auto core = master::MasterCore::Create(m, SystemClock());
  if (!core.ok()) return core.status().WithPrefix("the master's state");
  core_ = std::move(*core);
  recovered_ = core_->restarts() > 0;
  // The incident timeline the last master saved.
  if (auto saved = ReadFile(state_dir_ + "/incidents.json"); !state_dir_.empty() && saved.ok()) {
    if (!core_->RestoreIncidents(*saved)) {
      EDL_LOG(WARNING) << state_dir_ << "/incidents.json: not an incident log; starting a new one";
    }
  }
  // The scalars for GET /series, and the TensorBoard event file.
  auto events = JobEvents::Open(o.tensorboard_log_dir, cm_->optimizer.get(), core_->progress(),
                                core_->evaluation_history().size(), SystemClock().NowSeconds());
  if (!events.ok() && !recovered_) return events.status();
  if (!events.ok()) {
    // A running job is not ended for its plots.
    EDL_LOG(WARNING) << events.status().message() << "; this master writes no TensorBoard events";
    events = JobEvents::Open("", cm_->optimizer.get(), core_->progress(),
                             core_->evaluation_history().size(), SystemClock().NowSeconds());
  }
  events_ = std::move(events).value();
  return Status::Ok();
}

}  // namespace edl::roles::job
