// The Kubernetes flags (--cluster=kube) of edl train / predict / master and
// of the job-control commands, in ElasticDL's names and syntax.
#pragma once

#include <string>

#include "roles/job/process_options.h"

namespace CLI {
class App;
}

namespace edl::cmd {

// Where to find the cluster: --kubeconfig, --context, --namespace.
void AddKubeAccessFlags(CLI::App& app, roles::job::KubeJobOptions& k);
// Everything a job's pods need (image, resources, priorities, volumes,
// env); `for_master` adds the flags only the client passes to the master.
void AddKubeJobFlags(CLI::App& app, roles::job::KubeJobOptions& k, bool for_master);

}  // namespace edl::cmd
