// edl dashboard --cluster=kube: the job page on this machine, relayed to the
// master through the API server's service proxy.
#include <unistd.h>

#include "kube/client.h"
#include "kube/json_path.h"
#include "net/rpc.h"
#include "roles/job/kube_job.h"
#include "roles/job/kube_job_parts.h"

namespace edl::roles::job {

Status KubeDashboard(const KubeJobOptions& access, const std::string& job, int port, FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  EDL_ASSIGN_OR_RETURN(nlohmann::json master, FindMasterPod(*c.client, c.ns, job));
  const std::string phase = kube::StringAt(master, {"status", "phase"});
  if (phase != "Running") {
    return FailedPrecondition("job " + job + ": its master pod is " +
                              (phase.empty() ? std::string("not running") : phase) +
                              ", so it serves no page (see `edl status " + job +
                              " --cluster=kube`)");
  }
  const std::string proxy = "/api/v1/namespaces/" + c.ns + "/services/" + MasterName(job) + ":" +
                            std::to_string(kKubeMasterPort) + "/proxy";
  // The answer must work through the proxy before the URL is printed.
  auto probe = c.client->GetRaw(proxy + "/status");
  if (!probe.ok()) {
    return probe.status().WithPrefix("job " + job +
                                     ": the master is not reachable through the API server");
  }
  net::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = port;
  so.secret = "unused: every path below is public on this loopback relay";
  net::RpcServer server(so);
  kube::Client* client = c.client.get();
  for (const char* path : {"/", "/status", "/series"}) {
    const std::string target = proxy + path;
    const std::string type =
        std::string(path) == "/" ? "text/html; charset=utf-8" : "application/json";
    server.HandleGet(
        path,
        [client, target, type] {
          auto body = client->GetRaw(target);
          if (!body.ok()) {
            return net::HttpResponse{502, "text/plain; charset=utf-8",
                                     "the API server's service proxy: " + body.status().message()};
          }
          return net::HttpResponse{200, type, *body};
        },
        /*public_access=*/true);
  }
  EDL_RETURN_IF_ERROR(server.Start());
  std::fprintf(out,
               "job %s: http://127.0.0.1:%d/ (relayed through the Kubernetes API server; "
               "Ctrl-C stops)\n",
               job.c_str(), server.port());
  std::fflush(out);
  for (;;) ::pause();  // until a signal ends the process
}

}  // namespace edl::roles::job
