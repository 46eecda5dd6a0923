// The parts of a pod spec that the client (the master pod) and the master
// (PS and worker pods) both write, so that every pod of a job is labelled,
// mounted and given its environment the same way. Private to the .cc files
// of roles/cluster and roles/job (it includes nlohmann).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roles/cluster/kube_resources.h"

namespace edl::roles::cluster {

// app.kubernetes.io/{name,instance,component,managed-by}, edl-job, edl-role.
nlohmann::json JobLabels(const std::string& job, const std::string& role,
                         const std::string& managed_by);
// POD_NAME, POD_NAMESPACE, POD_UID and POD_IP from the downward API.
nlohmann::json DownwardApiEnv();
// The pod's volumes and the container's mounts: the job's ConfigMap at
// kJobConfigDir and Secret at kJobSecretDir (when named, read-only), then
// the user's --volume list.
void AddJobVolumes(const std::string& config_map, const std::string& secret,
                   const std::vector<VolumeSpec>& volumes, nlohmann::json* pod_volumes,
                   nlohmann::json* mounts);
// A Secret with database credentials (when named): its key "password" as
// PGPASSWORD (optional: a Secret of certificates only is fine) and all its
// keys as files in kDatabaseSecretDir, mode 0600 as libpq wants for a
// passfile or a client key.
void AddDatabaseSecret(const std::string& secret, nlohmann::json* env, nlohmann::json* pod_volumes,
                       nlohmann::json* mounts);
// {"requests": ..., "limits": ...}, leaving out empty lists.
nlohmann::json ResourcesJson(const ResourceList& requests, const ResourceList& limits);

}  // namespace edl::roles::cluster
