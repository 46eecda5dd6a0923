// edl train|evaluate|predict --cluster=kube: validate the job, build its
// objects, submit them (or write --yaml), follow the master.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "base/file.h"
#include "base/logging.h"
#include "kube/client.h"
#include "kube/json_path.h"
#include "kube/yaml.h"
#include "roles/job/kube_fetch.h"
#include "roles/job/kube_follow.h"
#include "roles/job/kube_job.h"
#include "roles/job/kube_job_parts.h"
#include "roles/job/kube_manifests.h"
#include "roles/job/kube_validation.h"
#include "roles/job_dir.h"

namespace edl::roles::job {
namespace {

using Json = nlohmann::json;
using kube::StringAt;

Json OwnerReference(const Json& master_job) {
  return Json::array({{{"apiVersion", "batch/v1"},
                       {"kind", "Job"},
                       {"name", StringAt(master_job, {"metadata", "name"})},
                       {"uid", StringAt(master_job, {"metadata", "uid"})},
                       {"controller", true}}});
}

}  // namespace

Status SubmitKubeJob(const MasterProcessOptions& submitted, const KubeSubmitOptions& s) {
  // Outputs on no volume come back to this machine when it follows the job.
  MasterProcessOptions m = submitted;
  std::vector<FetchedOutput> fetch;
  if (!s.detach && s.yaml_path.empty()) {
    EDL_ASSIGN_OR_RETURN(fetch, HoldOutputsInPod(&m));
  }
  EDL_ASSIGN_OR_RETURN(std::string spec_text, ValidateKubeJob(m));
  EDL_ASSIGN_OR_RETURN(std::string secret, RandomHex(32));
  EDL_ASSIGN_OR_RETURN(std::vector<Json> objects, KubeJobObjects(m, secret, spec_text));
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
  if (fetch.empty()) return FollowKubeJob(client, c.ns, job, s.out);
  OutputFetcher fetcher(m.kube, job, secret, fetch);
  EDL_RETURN_IF_ERROR(FollowKubeJob(client, c.ns, job, s.out));
  return fetcher.Finish();
}

}  // namespace edl::roles::job
