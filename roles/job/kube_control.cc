// edl status|logs|stop|scale|list --cluster=kube: job control through the
// API server.
#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "kube/base64.h"
#include "kube/client.h"
#include "kube/json_path.h"
#include "kube/pod_status.h"
#include "net/rpc.h"
#include "roles/job/kube_job.h"
#include "roles/job/kube_job_parts.h"

namespace edl::roles::job {

using Json = nlohmann::json;
using kube::StringAt;

Status KubeJobStatus(const KubeJobOptions& access, const std::string& job, FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  auto master = FindMasterPod(*c.client, c.ns, job);
  if (!master.ok()) return master.status();
  const std::string phase = StringAt(*master, {"status", "phase"});
  if (phase == "Running") {
    auto status = c.client->GetRaw("/api/v1/namespaces/" + c.ns + "/services/" + MasterName(job) +
                                   ":" + std::to_string(kKubeMasterPort) + "/proxy/status");
    if (status.ok()) {
      Json j = Json::parse(*status, nullptr, false);
      std::fprintf(out, "%s\n", j.is_discarded() ? status->c_str() : j.dump(2).c_str());
      return Status::Ok();
    }
    EDL_LOG(WARNING) << "the master's status API is not reachable through the API server: "
                     << status.status().message();
  }
  // The pods of the job, as Kubernetes sees them.
  auto pods = c.client->List(kube::Pods(), c.ns, kube::ListOptions{"edl-job=" + job, "", "", 500});
  if (!pods.ok()) return pods.status();
  std::fprintf(out, "%-40s %-10s %-8s %s\n", "POD", "PHASE", "AGE", "DETAIL");
  for (const Json& p : (*pods)["items"]) {
    const kube::PodFate fate = kube::ClassifyPod(p, false, false);
    std::fprintf(out, "%-40s %-10s %-8s %s\n", StringAt(p, {"metadata", "name"}).c_str(),
                 StringAt(p, {"status", "phase"}).c_str(),
                 Age(StringAt(p, {"metadata", "creationTimestamp"})).c_str(),
                 fate.kind == kube::PodFate::Kind::kAlive ? kube::UnschedulableMessage(p).c_str()
                                                          : fate.detail.c_str());
  }
  return Status::Ok();
}

Status KubeJobLogs(const KubeJobOptions& access, const std::string& job, const std::string& process,
                   bool follow, FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  std::string pod_name;
  if (process.empty() || process == "master") {
    EDL_ASSIGN_OR_RETURN(Json master, FindMasterPod(*c.client, c.ns, job));
    pod_name = StringAt(master, {"metadata", "name"});
  } else {
    auto pods = c.client->List(
        kube::Pods(), c.ns,
        kube::ListOptions{"edl-job=" + job + ",edl-process=" + process, "", "", 500});
    if (!pods.ok()) return pods.status();
    int64_t newest = -1;
    pod_name.clear();
    for (const Json& p : (*pods)["items"]) {
      const int64_t incarnation =
          std::atoll(StringAt(p, {"metadata", "annotations", "edl/incarnation"}).c_str());
      if (incarnation > newest) {
        newest = incarnation;
        pod_name = StringAt(p, {"metadata", "name"});
      }
    }
    if (pod_name.empty())
      return NotFound("job " + job + ": no pod of " + process + " in namespace " + c.ns);
  }
  const std::string path = "/api/v1/namespaces/" + c.ns + "/pods/" + pod_name +
                           "/log?container=main" + (follow ? "&follow=true" : "");
  return c.client->Stream(path, [out](std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fflush(out);
    return true;
  });
}

Status KubeStopJob(const KubeJobOptions& access, const std::string& job, FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  auto r = c.client->Delete(kube::Jobs(), c.ns, MasterName(job), {});
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kNotFound) {
      return NotFound("job " + job + ": no Job " + MasterName(job) + " in namespace " + c.ns);
    }
    return r.status();
  }
  std::fprintf(out,
               "job %s: stopping (deleted Job %s; its pods, services, config map and secret "
               "are removed with it)\n",
               job.c_str(), MasterName(job).c_str());
  return Status::Ok();
}

Status KubeScaleJob(const KubeJobOptions& access, const std::string& job, int num_workers,
                    FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  auto secret = c.client->Get(kube::Secrets(), c.ns, SecretName(job));
  if (!secret.ok()) {
    if (secret.status().code() == StatusCode::kNotFound) {
      return NotFound("job " + job + ": no secret " + SecretName(job) + " in namespace " + c.ns +
                      " (is the job running?)");
    }
    return secret.status();
  }
  const std::optional<std::string> key = kube::Base64Decode(StringAt(*secret, {"data", "secret"}));
  if (!key || key->empty()) {
    return FailedPrecondition("job " + job + ": secret " + SecretName(job) +
                              " has no data.secret to authenticate to the master with");
  }
  const std::string path = "/api/v1/namespaces/" + c.ns + "/services/" + MasterName(job) + ":" +
                           std::to_string(kKubeMasterPort) + "/proxy/edl.Control/Scale";
  auto r = c.client->PostRaw(path, std::to_string(num_workers), "application/octet-stream",
                             {{net::kRelayedAuthorizationHeader, "Bearer " + *key}});
  if (!r.ok()) return r.status().WithPrefix("job " + job);
  std::fprintf(out, "job %s: %s\n", job.c_str(), r->c_str());
  return Status::Ok();
}

Status KubeListJobs(const KubeJobOptions& access, FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  auto jobs = c.client->List(kube::Jobs(), c.ns, kube::ListOptions{"edl-role=master", "", "", 500});
  if (!jobs.ok()) return jobs.status();
  if ((*jobs)["items"].empty()) {
    std::fprintf(out, "no edl jobs in namespace %s\n", c.ns.c_str());
    return Status::Ok();
  }
  std::fprintf(out, "%-30s %-10s %-8s %s\n", "JOB", "PHASE", "AGE", "MASTER POD");
  for (const Json& j : (*jobs)["items"]) {
    const std::string job = StringAt(j, {"metadata", "labels", "edl-job"});
    auto master = FindMasterPod(*c.client, c.ns, job);
    std::fprintf(out, "%-30s %-10s %-8s %s\n", job.c_str(),
                 master.ok() ? StringAt(*master, {"status", "phase"}).c_str() : "-",
                 Age(StringAt(j, {"metadata", "creationTimestamp"})).c_str(),
                 master.ok() ? StringAt(*master, {"metadata", "name"}).c_str() : "-");
  }
  return Status::Ok();
}

}  // namespace edl::roles::job
