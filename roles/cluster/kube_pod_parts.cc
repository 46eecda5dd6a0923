#include "roles/cluster/kube_pod_parts.h"

#include "roles/cluster/kube_cluster.h"

namespace edl::roles::cluster {
namespace {

using Json = nlohmann::json;

Json FieldEnv(const char* name, const char* path) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}};
}

}  // namespace

Json JobLabels(const std::string& job, const std::string& role, const std::string& managed_by) {
  return {{"app.kubernetes.io/name", "edl"},
          {"app.kubernetes.io/instance", job},
          {"app.kubernetes.io/component", role},
          {"app.kubernetes.io/managed-by", managed_by},
          {"edl-job", job},
          {"edl-role", role}};
}

Json DownwardApiEnv() {
  return Json::array({FieldEnv("POD_NAME", "metadata.name"),
                      FieldEnv("POD_NAMESPACE", "metadata.namespace"),
                      FieldEnv("POD_UID", "metadata.uid"), FieldEnv("POD_IP", "status.podIP")});
}

void AddJobVolumes(const std::string& config_map, const std::string& secret,
                   const std::vector<VolumeSpec>& volumes, Json* pod_volumes, Json* mounts) {
  if (!config_map.empty()) {
    pod_volumes->push_back({{"name", "job-config"}, {"configMap", {{"name", config_map}}}});
    mounts->push_back({{"name", "job-config"}, {"mountPath", kJobConfigDir}, {"readOnly", true}});
  }
  if (!secret.empty()) {
    pod_volumes->push_back({{"name", "job-secret"}, {"secret", {{"secretName", secret}}}});
    mounts->push_back({{"name", "job-secret"}, {"mountPath", kJobSecretDir}, {"readOnly", true}});
  }
  for (const VolumeSpec& v : volumes) {
    Json volume = {{"name", v.name}};
    if (!v.claim_name.empty()) {
      volume["persistentVolumeClaim"] = {{"claimName", v.claim_name}};
    } else {
      volume["hostPath"] = {{"path", v.host_path}};
      if (!v.host_path_type.empty()) volume["hostPath"]["type"] = v.host_path_type;
    }
    pod_volumes->push_back(volume);
    Json mount = {{"name", v.name}, {"mountPath", v.mount_path}};
    if (!v.sub_path.empty()) mount["subPath"] = v.sub_path;
    mounts->push_back(mount);
  }
}

void AddDatabaseSecret(const std::string& secret, Json* env, Json* pod_volumes, Json* mounts) {
  if (secret.empty()) return;
  env->push_back(
      {{"name", "PGPASSWORD"},
       {"valueFrom",
        {{"secretKeyRef", {{"name", secret}, {"key", "password"}, {"optional", true}}}}}});
  pod_volumes->push_back(
      {{"name", "database"}, {"secret", {{"secretName", secret}, {"defaultMode", 0600}}}});
  mounts->push_back({{"name", "database"}, {"mountPath", kDatabaseSecretDir}, {"readOnly", true}});
}

Json ResourcesJson(const ResourceList& requests, const ResourceList& limits) {
  Json resources = Json::object();
  if (!requests.empty()) resources["requests"] = requests;
  if (!limits.empty()) resources["limits"] = limits;
  return resources;
}

}  // namespace edl::roles::cluster
