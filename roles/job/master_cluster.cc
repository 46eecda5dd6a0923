#include "roles/job/master_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/logging.h"
#include "kube/client.h"
#include "roles/cluster/kube_resources.h"

namespace edl::roles::job {

Result<int> PickFreePort(const std::string& host) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Unavailable("cannot open a socket to pick a port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return Unavailable("cannot bind " + host + " to pick a port");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

Result<nlohmann::json> MasterJobOwner(kube::Client& client, const std::string& ns,
                                      const std::string& pod_name) {
  nlohmann::json owner = nlohmann::json::array();
  if (pod_name.empty()) return owner;
  EDL_ASSIGN_OR_RETURN(nlohmann::json pod, client.Get(kube::Pods(), ns, pod_name));
  for (const auto& ref : pod["metadata"].value("ownerReferences", nlohmann::json::array())) {
    if (ref.value("controller", false) && ref.value("kind", "") == "Job") {
      owner.push_back({{"apiVersion", ref.value("apiVersion", "batch/v1")},
                       {"kind", "Job"},
                       {"name", ref.value("name", "")},
                       {"uid", ref.value("uid", "")},
                       {"controller", false}});
    }
  }
  return owner;
}

Result<std::unique_ptr<cluster::KubeCluster>> MakeKubeCluster(const MasterProcessOptions& o,
                                                              kube::Client& client, bool adopt) {
  const KubeJobOptions& k = o.kube;
  cluster::KubeClusterOptions ko;
  ko.job_name = o.job.job_name;
  ko.namespace_name = k.namespace_name;
  ko.image = k.image;
  ko.image_pull_policy = k.image_pull_policy;
  ko.adopt = adopt;
  // The owner of the job's pods: the Job that runs the master (a replaced
  // master keeps them; deleting the Job removes them), else the master pod.
  if (!k.pod_name.empty()) {
    const std::string ns = k.namespace_name.empty() ? client.default_namespace() : k.namespace_name;
    EDL_ASSIGN_OR_RETURN(nlohmann::json job, MasterJobOwner(client, ns, k.pod_name));
    if (!job.empty()) {
      ko.owner_api_version = job[0].value("apiVersion", "batch/v1");
      ko.owner_kind = "Job";
      ko.owner_name = job[0].value("name", "");
      ko.owner_uid = job[0].value("uid", "");
    } else {
      EDL_ASSIGN_OR_RETURN(nlohmann::json pod, client.Get(kube::Pods(), ns, k.pod_name));
      ko.owner_api_version = "v1";
      ko.owner_kind = "Pod";
      ko.owner_name = k.pod_name;
      ko.owner_uid = pod["metadata"].value("uid", "");
    }
  }
  if (ko.owner_uid.empty()) {
    EDL_LOG(WARNING) << "not running in a pod (no POD_NAME): the job's pods get no owner and "
                        "outlive this master";
  }
  ko.config_map = k.config_map;
  ko.secret_name = k.secret_name;
  ko.database_secret = k.database_secret;
  EDL_ASSIGN_OR_RETURN(ko.volumes, cluster::ParseVolumes("--volume", k.volume));
  EDL_ASSIGN_OR_RETURN(ko.env, cluster::ParseEnvs("--envs", k.envs));
  ko.termination_grace_period_s = k.termination_grace_period_s;
  cluster::PodOptions ps, worker;
  EDL_ASSIGN_OR_RETURN(ps.requests,
                       cluster::ParseResources("--ps_resource_request", k.ps_resource_request));
  EDL_ASSIGN_OR_RETURN(ps.limits,
                       cluster::ParseResources("--ps_resource_limit", k.ps_resource_limit));
  if (k.ps_resource_limit.empty()) ps.limits = ps.requests;
  ps.priority_class = k.ps_pod_priority;
  EDL_ASSIGN_OR_RETURN(worker.requests, cluster::ParseResources("--worker_resource_request",
                                                                k.worker_resource_request));
  EDL_ASSIGN_OR_RETURN(worker.limits,
                       cluster::ParseResources("--worker_resource_limit", k.worker_resource_limit));
  if (k.worker_resource_limit.empty()) worker.limits = worker.requests;
  EDL_ASSIGN_OR_RETURN(
      std::vector<std::string> priorities,
      cluster::WorkerPriorities("--worker_pod_priority", k.worker_pod_priority, o.num_workers));
  ko.pod_options = [ps, worker, priorities](const std::string& name) {
    if (name.rfind("ps-", 0) == 0) return ps;
    cluster::PodOptions w = worker;
    const int index = std::atoi(name.substr(name.rfind('-') + 1).c_str());
    if (!priorities.empty()) {
      w.priority_class = priorities[std::min<size_t>(static_cast<size_t>(std::max(index, 0)),
                                                     priorities.size() - 1)];
    }
    return w;
  };
  return cluster::KubeCluster::Create(client, std::move(ko));
}

}  // namespace edl::roles::job
