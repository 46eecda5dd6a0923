// The objects of a job on Kubernetes (roles/job/kube_manifests.h).
#include "roles/job/kube_manifests.h"

#include <sys/stat.h>

#include "base/file.h"
#include "kube/base64.h"
#include "roles/cluster/kube_cluster.h"
#include "roles/cluster/kube_pod_parts.h"
#include "roles/cluster/kube_resources.h"
#include "roles/job/kube_job.h"
#include "roles/job/kube_job_parts.h"
#include "roles/job/master_process.h"

namespace edl::roles::job {
namespace {

using Json = nlohmann::json;

Json Labels(const std::string& job, const std::string& role) {
  return cluster::JobLabels(job, role, "edl");
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

}  // namespace

bool IsLocalFile(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Result<std::vector<Json>> KubeJobObjects(const MasterProcessOptions& m, const std::string& secret,
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
  cluster::AddDatabaseSecret(k.database_secret, &env, &pod_volumes, &mounts);
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

Result<std::vector<std::string>> BuildKubeJobManifests(const MasterProcessOptions& m,
                                                       const std::string& secret) {
  std::string spec_text;
  if (IsLocalFile(m.model.model_def)) {
    EDL_ASSIGN_OR_RETURN(spec_text, ReadFile(m.model.model_def));
  }
  EDL_ASSIGN_OR_RETURN(std::vector<Json> objects, KubeJobObjects(m, secret, spec_text));
  std::vector<std::string> out;
  for (const Json& o : objects) out.push_back(o.dump());
  return out;
}

}  // namespace edl::roles::job
