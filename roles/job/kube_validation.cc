// Checking a job for Kubernetes on the client (roles/job/kube_validation.h).
#include "roles/job/kube_validation.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "base/file.h"
#include "base/logging.h"
#include "data/data_paths.h"
#include "data/sql_url.h"
#include "roles/cluster/kube_resources.h"
#include "roles/job/held_outputs.h"
#include "roles/job/kube_manifests.h"
#include "roles/job/process_options.h"
#include "roles/local/checkpoint.h"
#include "roles/local/compiled_model.h"
#include "roles/local/model_source.h"

namespace edl::roles::job {
namespace {

using Json = nlohmann::json;

}  // namespace

Result<std::string> ValidateKubeJob(const MasterProcessOptions& m) {
  std::string model_spec_text;
  EDL_RETURN_IF_ERROR(cluster::CheckDnsLabel("--job_name", m.job.job_name, 40));
  const KubeJobOptions& k = m.kube;
  if (!k.namespace_name.empty())
    EDL_RETURN_IF_ERROR(cluster::CheckDnsLabel("--namespace", k.namespace_name));
  if (k.image.empty()) return InvalidArgument("--image_name is required with --cluster=kube");
  const std::pair<const char*, const std::string*> resources[] = {
      {"--master_resource_request", &k.master_resource_request},
      {"--master_resource_limit", &k.master_resource_limit},
      {"--worker_resource_request", &k.worker_resource_request},
      {"--worker_resource_limit", &k.worker_resource_limit},
      {"--ps_resource_request", &k.ps_resource_request},
      {"--ps_resource_limit", &k.ps_resource_limit}};
  for (const auto& [flag, text] : resources) {
    EDL_RETURN_IF_ERROR(cluster::ParseResources(flag, *text).status());
  }
  EDL_ASSIGN_OR_RETURN(auto volumes, cluster::ParseVolumes("--volume", k.volume));
  EDL_RETURN_IF_ERROR(cluster::ParseEnvs("--envs", k.envs).status());
  EDL_RETURN_IF_ERROR(
      cluster::WorkerPriorities("--worker_pod_priority", k.worker_pod_priority, m.num_workers)
          .status());
  if (!k.master_pod_priority.empty()) {
    EDL_RETURN_IF_ERROR(
        cluster::CheckDnsLabel("--master_pod_priority", k.master_pod_priority, 253));
  }
  if (!k.ps_pod_priority.empty()) {
    EDL_RETURN_IF_ERROR(cluster::CheckDnsLabel("--ps_pod_priority", k.ps_pod_priority, 253));
  }
  // The model: compiled here so a bad spec fails now, not in a pod.
  ModelOptions mo = m.model;
  mo.for_inference = m.training_data.empty();
  mo.device = "cpu";  // the client only checks the spec; the pods choose their device
  if (!IsSingleProcessCheckpoint(mo.checkpoint_dir_for_init)) mo.checkpoint_dir_for_init.clear();
  const bool spec_is_file = IsLocalFile(m.model.model_def);
  if (spec_is_file) {
    EDL_ASSIGN_OR_RETURN(model_spec_text, ReadFile(m.model.model_def));
    if (model_spec_text.size() > 900 * 1024) {
      return InvalidArgument("--model_def " + m.model.model_def +
                             ": too large for a ConfigMap (1 MiB); put it on a --volume");
    }
    // A TF.js model.json needs its weight files beside it.
    Json j = Json::parse(model_spec_text, nullptr, false);
    if (j.is_object() && j.contains("weightsManifest") &&
        !cluster::OnVolume(m.model.model_def, volumes)) {
      return InvalidArgument(
          "--model_def " + m.model.model_def +
          ": a TF.js model with weight files must be on a --volume the pods mount");
    }
  } else if (m.model.model_def.rfind("zoo:", 0) != 0 &&
             !cluster::OnVolume(m.model.model_def, volumes)) {
    return InvalidArgument("--model_def " + m.model.model_def +
                           ": not a file here and not under any --volume mount_path");
  }
  std::optional<CompiledModel> cm;
  if (spec_is_file || m.model.model_def.rfind("zoo:", 0) == 0) {
    auto compiled = CompileModel(mo);
    if (!compiled.ok()) return compiled.status();
    cm.emplace(std::move(*compiled));
  }
  const std::pair<const char*, const std::string*> data[] = {
      {"--training_data", &m.training_data},
      {"--validation_data", &m.validation_data},
      {"--prediction_data", &m.prediction_data}};
  for (const auto& [flag, path] : data) {
    if (path->empty()) continue;
    // A database: the pods reach it with --database_secret's credentials,
    // which this machine may not have; the master checks it when it plans.
    if (data::IsSqlUrl(*path)) {
      EDL_ASSIGN_OR_RETURN(data::SqlUrl url, data::ParseSqlUrl(*path));
      if (url.kind == data::SqlUrl::Kind::kSqlite && !cluster::OnVolume(url.path, volumes)) {
        return InvalidArgument(std::string(flag) + " " + *path + ": SQLite file " + url.path +
                               " is not under any --volume mount_path the pods see");
      }
      continue;
    }
    // A data set this machine sees (a file, directory, glob or list) is
    // checked against the model here; otherwise each of its comma-separated
    // parts must lie on a volume, and the pods resolve it.
    if (data::ResolveDataPaths(*path).ok()) {
      if (cm) {
        EDL_RETURN_IF_ERROR(OpenSourceForModel(flag, *path, *cm,
                                               std::string(flag) != "--prediction_data",
                                               JobReading(mo, /*worker=*/false))
                                .status());
      }
      continue;
    }
    size_t begin = 0;
    while (begin <= path->size()) {
      size_t end = path->find(',', begin);
      if (end == std::string::npos) end = path->size();
      const std::string part = path->substr(begin, end - begin);
      if (!cluster::OnVolume(part, volumes)) {
        return InvalidArgument(std::string(flag) + " " + part +
                               ": not found here and not under any --volume mount_path the "
                               "pods see");
      }
      begin = end + 1;
    }
  }
  for (const std::string* out :
       {&m.output, &m.checkpoint_dir, &m.prediction_output, &m.tensorboard_log_dir}) {
    if (!out->empty() && !cluster::OnVolume(*out, volumes) && !volumes.empty() &&
        out->rfind(kHeldOutputsDir, 0) != 0) {
      EDL_LOG(WARNING) << *out << " is not under any --volume: it is written inside the pod";
    }
  }
  return model_spec_text;
}

}  // namespace edl::roles::job
