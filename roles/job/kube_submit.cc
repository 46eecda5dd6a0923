#include <sys/stat.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/file.h"
#include "base/logging.h"
#include "data/data_paths.h"
#include "kube/base64.h"
#include "kube/client.h"
#include "kube/json_path.h"
#include "kube/pod_status.h"
#include "kube/yaml.h"
#include "roles/cluster/kube_cluster.h"
#include "roles/cluster/kube_pod_parts.h"
#include "roles/cluster/kube_resources.h"
#include "roles/job/kube_job.h"
#include "roles/job/kube_job_parts.h"
#include "roles/job/master_process.h"
#include "roles/job/ps_process.h"
#include "roles/job_dir.h"
#include "roles/local/compiled_model.h"
#include "roles/local/evaluation.h"

// edl train|evaluate|predict --cluster=kube: validate, build the job's
// objects, submit them (or write --yaml), follow the master.
namespace edl::roles::job {
namespace {

using Json = nlohmann::json;
using kube::StringAt;

Json Labels(const std::string& job, const std::string& role) {
  return cluster::JobLabels(job, role, "edl");
}

bool IsLocalFile(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Whether `path` lies under one of the job's volume mounts.
bool OnVolume(const std::string& path, const std::vector<cluster::VolumeSpec>& volumes) {
  for (const auto& v : volumes) {
    const std::string& m = v.mount_path;
    if (path == m || (path.size() > m.size() && path.compare(0, m.size(), m) == 0 &&
                      (m.back() == '/' || path[m.size()] == '/'))) {
      return true;
    }
  }
  return false;
}

// Checks what can be checked before anything is created: names, flags,
// the model spec, the data.
Status Validate(const MasterProcessOptions& m, std::string* model_spec_text) {
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
    EDL_ASSIGN_OR_RETURN(*model_spec_text, ReadFile(m.model.model_def));
    if (model_spec_text->size() > 900 * 1024) {
      return InvalidArgument("--model_def " + m.model.model_def +
                             ": too large for a ConfigMap (1 MiB); put it on a --volume");
    }
    // A TF.js model.json needs its weight files beside it.
    Json j = Json::parse(*model_spec_text, nullptr, false);
    if (j.is_object() && j.contains("weightsManifest") && !OnVolume(m.model.model_def, volumes)) {
      return InvalidArgument(
          "--model_def " + m.model.model_def +
          ": a TF.js model with weight files must be on a --volume the pods mount");
    }
  } else if (m.model.model_def.rfind("zoo:", 0) != 0 && !OnVolume(m.model.model_def, volumes)) {
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
      if (!OnVolume(part, volumes)) {
        return InvalidArgument(std::string(flag) + " " + part +
                               ": not found here and not under any --volume mount_path the "
                               "pods see");
      }
      begin = end + 1;
    }
  }
  for (const std::string* out :
       {&m.output, &m.checkpoint_dir, &m.prediction_output, &m.tensorboard_log_dir}) {
    if (!out->empty() && !OnVolume(*out, volumes) && !volumes.empty()) {
      EDL_LOG(WARNING) << *out << " is not under any --volume: it is written inside the pod";
    }
  }
  return Status::Ok();
}

// The master pod's view of the job: paths inside the pod, its own IP.
MasterProcessOptions MasterInPod(const MasterProcessOptions& m, bool spec_in_config_map) {
  MasterProcessOptions p = m;
  p.host = "$(POD_IP)";
  p.port = kKubeMasterPort;
  p.job.job_dir.clear();
  p.job.secret_file = std::string(cluster::kJobSecretDir) + "/secret";
  if (spec_in_config_map) p.model.model_def = std::string(cluster::kJobConfigDir) + "/model.json";
  p.kube.enabled = true;
  p.kube.kubeconfig.clear();  // in the pod: the service account
  p.kube.context.clear();
  p.kube.config_map = ConfigMapName(m.job.job_name);
  p.kube.secret_name = SecretName(m.job.job_name);
  return p;
}

Result<std::vector<Json>> Manifests(const MasterProcessOptions& m, const std::string& secret,
                                    const std::string& model_spec_text) {
  const std::string& job = m.job.job_name;
  const KubeJobOptions& k = m.kube;
  const MasterProcessOptions in_pod = MasterInPod(m, !model_spec_text.empty());
  std::vector<Json> out;

  out.push_back({{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", SecretName(job)}, {"labels", Labels(job, "secret")}}},
                 {"type", "Opaque"},
                 {"data", {{"secret", kube::Base64Encode(secret)}}}});

  std::vector<std::string> args = ToArgs(in_pod);
  Json job_spec = {{"job_name", job}, {"master_args", args}};
  Json config_data = {{"job.json", job_spec.dump(2)}};
  if (!model_spec_text.empty()) config_data["model.json"] = model_spec_text;
  out.push_back({{"apiVersion", "v1"},
                 {"kind", "ConfigMap"},
                 {"metadata", {{"name", ConfigMapName(job)}, {"labels", Labels(job, "config")}}},
                 {"data", config_data}});

  EDL_ASSIGN_OR_RETURN(auto requests, cluster::ParseResources("--master_resource_request",
                                                              k.master_resource_request));
  EDL_ASSIGN_OR_RETURN(auto limits,
                       cluster::ParseResources("--master_resource_limit", k.master_resource_limit));
  if (k.master_resource_limit.empty()) limits = requests;
  EDL_ASSIGN_OR_RETURN(auto volumes, cluster::ParseVolumes("--volume", k.volume));
  EDL_ASSIGN_OR_RETURN(auto envs, cluster::ParseEnvs("--envs", k.envs));

  Json env = cluster::DownwardApiEnv();
  env.push_back({{"name", "EDL_JOB"}, {"value", job}});
  for (const auto& [name, value] : envs) env.push_back({{"name", name}, {"value", value}});
  Json mounts = Json::array(), pod_volumes = Json::array();
  cluster::AddJobVolumes(ConfigMapName(job), SecretName(job), volumes, &pod_volumes, &mounts);
  const Json resources = cluster::ResourcesJson(requests, limits);
  Json container = {
      {"name", "main"},
      {"image", k.image},
      {"imagePullPolicy", k.image_pull_policy},
      {"command", Json::array({"edl"})},
      {"args", args},
      {"env", env},
      {"ports",
       Json::array({{{"name", "rpc"}, {"containerPort", kKubeMasterPort}, {"protocol", "TCP"}}})},
      {"resources", resources},
      {"volumeMounts", mounts}};
  Json spec = {{"restartPolicy", "Never"},
               {"terminationGracePeriodSeconds", k.termination_grace_period_s + 30},
               {"containers", Json::array({container})},
               {"volumes", pod_volumes}};
  if (!k.service_account.empty()) spec["serviceAccountName"] = k.service_account;
  if (!k.master_pod_priority.empty()) spec["priorityClassName"] = k.master_pod_priority;
  // The master runs as a batch/v1 Job: Kubernetes' Job controller replaces
  // a master pod that fails, is evicted, preempted or lost with its node,
  // and the new master continues from the state it kept (on the checkpoint
  // volume, else in the ConfigMap <job>-master-state).
  // Disruptions do not count toward the limit; a replacement starts only
  // once the old pod is gone, so two masters never share the state.
  Json job_spec_k8s = {
      {"backoffLimit", kKubeMasterBackoffLimit},
      {"podReplacementPolicy", "Failed"},
      {"podFailurePolicy",
       {{"rules",
         Json::array({{{"action", "Ignore"},
                       {"onPodConditions",
                        Json::array({{{"type", "DisruptionTarget"}, {"status", "True"}}})}},
                      // A master that left the job to the next one (SIGTERM).
                      {{"action", "Ignore"},
                       {"onExitCodes",
                        {{"operator", "In"}, {"values", Json::array({kMasterLeavesExitCode})}}}},
                      // The job failed (or could not start): no new master.
                      {{"action", "FailJob"},
                       {"onExitCodes", {{"operator", "In"}, {"values", Json::array({1, 2})}}}}})}}},
      {"template", {{"metadata", {{"labels", Labels(job, "master")}}}, {"spec", spec}}}};
  out.push_back({{"apiVersion", "batch/v1"},
                 {"kind", "Job"},
                 {"metadata", {{"name", MasterName(job)}, {"labels", Labels(job, "master")}}},
                 {"spec", job_spec_k8s}});

  out.push_back({{"apiVersion", "v1"},
                 {"kind", "Service"},
                 {"metadata", {{"name", MasterName(job)}, {"labels", Labels(job, "master")}}},
                 {"spec",
                  {{"selector", {{"edl-job", job}, {"edl-role", "master"}}},
                   {"ports", Json::array({{{"name", "rpc"},
                                           {"port", kKubeMasterPort},
                                           {"targetPort", kKubeMasterPort},
                                           {"protocol", "TCP"}}})}}}});
  return out;
}

Json OwnerReference(const Json& master_job) {
  return Json::array({{{"apiVersion", "batch/v1"},
                       {"kind", "Job"},
                       {"name", StringAt(master_job, {"metadata", "name"})},
                       {"uid", StringAt(master_job, {"metadata", "uid"})},
                       {"controller", true}}});
}

// "Complete", "Failed" (with the message), or "" while the Job runs.
std::string JobOutcome(const Json& job, std::string* message) {
  for (const Json& c : job["status"].value("conditions", Json::array())) {
    const std::string type = c.value("type", "");
    if ((type == "Complete" || type == "Failed") && c.value("status", "") == "True") {
      *message = c.value("message", "");
      return type;
    }
  }
  return "";
}

}  // namespace

Status KubeWaitJob(const KubeJobOptions& access, const std::string& job, double timeout_s,
                   FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    auto master_job = c.client->Get(kube::Jobs(), c.ns, MasterName(job));
    if (!master_job.ok()) {
      if (master_job.status().code() == StatusCode::kNotFound) {
        return NotFound("job " + job + ": no Job " + MasterName(job) + " in namespace " + c.ns);
      }
      return master_job.status();
    }
    std::string message;
    const std::string outcome = JobOutcome(*master_job, &message);
    if (outcome == "Complete") {
      std::fprintf(out, "job %s: succeeded\n", job.c_str());
      return Status::Ok();
    }
    if (outcome == "Failed") {
      return Internal("job " + job + " failed" + (message.empty() ? "" : ": " + message) +
                      " (see `edl logs " + job + " --cluster=kube`)");
    }
    if (timeout_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
            timeout_s) {
      return DeadlineExceeded("job " + job + " still running after " +
                              std::to_string(static_cast<int64_t>(timeout_s)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));  // polling the API server
  }
}

namespace {

// How long the client waits out an API server that does not answer (a
// restart, 5xx answers) before it stops following; the job goes on.
constexpr auto kApiOutageTolerance = std::chrono::seconds(300);

// Whether the API server may answer differently in a moment.
bool Transient(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kInternal ||
         s.code() == StatusCode::kResourceExhausted || s.code() == StatusCode::kDeadlineExceeded;
}

// Follows the job's master: waits for its pod to start, streams its log,
// and when a master pod ends while the Job goes on (the Job controller
// replaces it), the next one's; returns the Job's outcome. An API server
// that fails for a while (kApiOutageTolerance) is waited out, and a log
// stream it cut is resumed from where it broke.
Status Follow(kube::Client& client, const std::string& ns, const std::string& job, FILE* out) {
  const auto poll = std::chrono::milliseconds(500);
  std::string followed_uid, last_phase, last_message;
  bool streamed_once = false;
  auto last_answer = std::chrono::steady_clock::now();
  bool outage_told = false;
  while (true) {
    auto master_job = client.Get(kube::Jobs(), ns, MasterName(job));
    if (!master_job.ok()) {
      if (master_job.status().code() == StatusCode::kNotFound) {
        return Internal("job " + job + ": its Job " + MasterName(job) + " was deleted");
      }
      if (!Transient(master_job.status()) ||
          std::chrono::steady_clock::now() - last_answer > kApiOutageTolerance) {
        return master_job.status().WithPrefix("following job " + job);
      }
      if (!outage_told) {
        std::fprintf(out, "edl: the API server does not answer (%s); waiting for it\n",
                     master_job.status().message().c_str());
        std::fflush(out);
        outage_told = true;
      }
      std::this_thread::sleep_for(poll);
      continue;
    }
    last_answer = std::chrono::steady_clock::now();
    outage_told = false;
    std::string message;
    const std::string outcome = JobOutcome(*master_job, &message);
    if (outcome == "Complete") return Status::Ok();
    auto pod = FindMasterPod(client, ns, job);
    if (outcome == "Failed") {
      std::string detail = message;
      if (pod.ok()) {
        const kube::PodFate fate = kube::ClassifyPod(*pod, false, false);
        detail = "master pod " + StringAt(*pod, {"metadata", "name"}) + " " +
                 (fate.detail.empty() ? "exited with code " + std::to_string(fate.exit_code)
                                      : fate.detail) +
                 (message.empty() ? "" : "; " + message);
      }
      return Internal("job " + job + " failed: " + detail + " (see `edl logs " + job +
                      " --cluster=kube`)");
    }
    if (!pod.ok()) {                      // between master pods
      std::this_thread::sleep_for(poll);  // polling the API server
      continue;
    }
    const std::string pod_name = StringAt(*pod, {"metadata", "name"});
    const std::string uid = StringAt(*pod, {"metadata", "uid"});
    const std::string phase = StringAt(*pod, {"status", "phase"});
    const std::string unschedulable = kube::UnschedulableMessage(*pod);
    if (uid != followed_uid && (phase == "Succeeded" || phase == "Failed")) {
      std::this_thread::sleep_for(poll);  // an old pod; its replacement comes
      continue;
    }
    if (phase != last_phase || unschedulable != last_message) {
      std::fprintf(out, "edl: master pod %s: %s%s\n", pod_name.c_str(), phase.c_str(),
                   unschedulable.empty() ? "" : (" (" + unschedulable + ")").c_str());
      std::fflush(out);
      last_phase = phase;
      last_message = unschedulable;
    }
    if (phase == "Pending" || uid == followed_uid) {
      std::this_thread::sleep_for(poll);
      continue;
    }
    // A master pod that runs (or ran): its log, to its end.
    if (streamed_once) {
      std::fprintf(out, "edl: the Job replaced the master: following %s\n", pod_name.c_str());
    }
    followed_uid = uid;
    streamed_once = true;
    const std::string log_path =
        "/api/v1/namespaces/" + ns + "/pods/" + pod_name + "/log?container=main&follow=true";
    auto sink = [out](std::string_view bytes) {
      std::fwrite(bytes.data(), 1, bytes.size(), out);
      std::fflush(out);
      return true;
    };
    Status streamed = client.Stream(log_path, sink);
    auto broke_at = std::chrono::steady_clock::now();
    if (!streamed.ok()) {
      std::fprintf(out, "edl: the master's log stream ended: %s\n", streamed.message().c_str());
    }
    // The pod ended (or the stream broke): the Job's conditions say what next.
    const auto deadline = std::chrono::steady_clock::now() + kApiOutageTolerance;
    while (std::chrono::steady_clock::now() < deadline) {
      auto again = client.Get(kube::Pods(), ns, pod_name);
      if (!again.ok() && Transient(again.status())) {
        std::this_thread::sleep_for(poll);  // the API server, not the pod
        continue;
      }
      const std::string now = again.ok() ? StringAt(*again, {"status", "phase"}) : "Gone";
      if (now != "Running") break;
      if (!streamed.ok()) {
        // From a second before it broke: a line may come twice, none is lost.
        const auto since = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now() - broke_at) +
                           std::chrono::seconds(2);
        streamed = client.Stream(log_path + "&sinceSeconds=" + std::to_string(since.count()), sink);
        broke_at = std::chrono::steady_clock::now();
        if (!streamed.ok()) std::this_thread::sleep_for(poll);
        continue;
      }
      std::this_thread::sleep_for(poll);
    }
    last_phase.clear();
  }
}

}  // namespace

Result<std::vector<std::string>> BuildKubeJobManifests(const MasterProcessOptions& m,
                                                       const std::string& secret) {
  std::string spec_text;
  if (IsLocalFile(m.model.model_def)) {
    EDL_ASSIGN_OR_RETURN(spec_text, ReadFile(m.model.model_def));
  }
  EDL_ASSIGN_OR_RETURN(std::vector<Json> objects, Manifests(m, secret, spec_text));
  std::vector<std::string> out;
  for (const Json& o : objects) out.push_back(o.dump());
  return out;
}

Status SubmitKubeJob(const MasterProcessOptions& m, const KubeSubmitOptions& s) {
  std::string spec_text;
  EDL_RETURN_IF_ERROR(Validate(m, &spec_text));
  EDL_ASSIGN_OR_RETURN(std::string secret, RandomHex(32));
  EDL_ASSIGN_OR_RETURN(std::vector<Json> objects, Manifests(m, secret, spec_text));
  const std::string& job = m.job.job_name;
  if (!s.yaml_path.empty()) {
    if (!m.kube.namespace_name.empty()) {
      for (Json& o : objects) o["metadata"]["namespace"] = m.kube.namespace_name;
    }
    EDL_RETURN_IF_ERROR(WriteFileAtomically(s.yaml_path, kube::ToYaml(objects)));
    // It holds the job's secret.
    ::chmod(s.yaml_path.c_str(), 0600);
    std::fprintf(s.out, "edl: wrote the %zu objects of job %s to %s (kubectl apply -f %s)\n",
                 objects.size(), job.c_str(), s.yaml_path.c_str(), s.yaml_path.c_str());
    return Status::Ok();
  }
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(m.kube));
  kube::Client& client = *c.client;
  // Secret and ConfigMap first (the master pod mounts them), then the pod;
  // then they are handed to the pod as owner so deleting it removes them.
  const kube::Resource kinds[] = {kube::Secrets(), kube::ConfigMaps()};
  for (size_t i = 0; i < 2; ++i) {
    auto r = client.Create(kinds[i], c.ns, objects[i]);
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kAlreadyExists) {
        return AlreadyExists("job " + job + " already exists in namespace " + c.ns +
                             " (`edl stop " + job +
                             " --cluster=kube`, or another --job_name): " + r.status().message());
      }
      return r.status();
    }
  }
  auto master = client.Create(kube::Jobs(), c.ns, objects[2]);
  if (!master.ok()) {
    for (size_t i = 0; i < 2; ++i) {
      (void)client.Delete(kinds[i], c.ns, StringAt(objects[i], {"metadata", "name"}), {});
    }
    return master.status().WithPrefix("creating the master Job of job " + job);
  }
  const Json owner = OwnerReference(*master);
  for (size_t i = 0; i < 2; ++i) {
    auto r = client.Patch(kinds[i], c.ns, StringAt(objects[i], {"metadata", "name"}),
                          Json{{"metadata", {{"ownerReferences", owner}}}});
    if (!r.ok())
      EDL_LOG(WARNING) << "cannot make the master own "
                       << StringAt(objects[i], {"metadata", "name"}) << ": "
                       << r.status().message();
  }
  objects[3]["metadata"]["ownerReferences"] = owner;
  auto service = client.Create(kube::Services(), c.ns, objects[3]);
  if (!service.ok())
    EDL_LOG(WARNING) << "cannot create the master's service: " << service.status().message();
  std::fprintf(s.out, "edl: job %s submitted to %s, namespace %s: master Job %s\n", job.c_str(),
               c.description.c_str(), c.ns.c_str(), MasterName(job).c_str());
  std::fflush(s.out);
  if (s.detach) {
    std::fprintf(s.out,
                 "edl: follow it with `edl logs %s --cluster=kube -f`, stop it with "
                 "`edl stop %s --cluster=kube`\n",
                 job.c_str(), job.c_str());
    return Status::Ok();
  }
  return Follow(client, c.ns, job, s.out);
}

}  // namespace edl::roles::job
