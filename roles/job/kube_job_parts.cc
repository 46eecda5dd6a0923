#include "roles/job/kube_job_parts.h"

#include <time.h>

#include <algorithm>
#include <ctime>

#include "kube/client.h"
#include "kube/config.h"

namespace edl::roles::job {

std::string MasterName(const std::string& job) { return job + "-master"; }
std::string ConfigMapName(const std::string& job) { return job + "-config"; }
std::string SecretName(const std::string& job) { return job + "-secret"; }

KubeConnection::KubeConnection() = default;
KubeConnection::KubeConnection(KubeConnection&&) noexcept = default;
KubeConnection::~KubeConnection() = default;

Result<KubeConnection> ConnectToKube(const KubeJobOptions& k) {
  EDL_ASSIGN_OR_RETURN(kube::ClusterConfig config, kube::LoadConfig(k.kubeconfig, k.context));
  KubeConnection c;
  c.description = config.description;
  EDL_ASSIGN_OR_RETURN(c.client, kube::Client::Create(config));
  c.ns = k.namespace_name.empty() ? c.client->default_namespace() : k.namespace_name;
  return c;
}

Result<nlohmann::json> FindMasterPod(kube::Client& client, const std::string& ns,
                                     const std::string& job) {
  auto pods = client.List(kube::Pods(), ns,
                          kube::ListOptions{"edl-job=" + job + ",edl-role=master", "", "", 500});
  if (!pods.ok()) return pods.status();
  const nlohmann::json* best = nullptr;
  auto rank = [](const nlohmann::json& p) {
    const std::string phase = p["status"].value("phase", "");
    const bool ended = phase == "Succeeded" || phase == "Failed";
    return std::make_pair(!ended, p["metadata"].value("creationTimestamp", ""));
  };
  for (const nlohmann::json& p : (*pods)["items"]) {
    if (best == nullptr || rank(p) > rank(*best)) best = &p;
  }
  if (best == nullptr) return NotFound("job " + job + ": no master pod in namespace " + ns);
  return *best;
}

namespace {

// "2026-11-21T05:17:31Z" -> seconds since the epoch (0 if malformed).
int64_t ParseTimestamp(const std::string& t) {
  std::tm tm{};
  if (!strptime(t.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

}  // namespace

std::string Age(const std::string& created) {
  const int64_t t = ParseTimestamp(created);
  if (t == 0) return "?";
  const int64_t s = std::max<int64_t>(0, std::time(nullptr) - t);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  if (s < 172800) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

}  // namespace edl::roles::job
