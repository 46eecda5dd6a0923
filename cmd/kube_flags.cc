#include "cmd/kube_flags.h"

#include <CLI/CLI.hpp>

namespace edl::cmd {

void AddKubeAccessFlags(CLI::App& app, roles::job::KubeJobOptions& k) {
  app.add_option("--kubeconfig", k.kubeconfig,
                 "kubeconfig file(s), colon-separated (default: $KUBECONFIG, then the "
                 "in-cluster service account, then ~/.kube/config)");
  app.add_option("--context", k.context, "kubeconfig context (default: its current-context)");
  app.add_option("--namespace", k.namespace_name,
                 "Kubernetes namespace (default: the context's, or the pod's own)");
}

void AddKubeJobFlags(CLI::App& app, roles::job::KubeJobOptions& k, bool for_master) {
  AddKubeAccessFlags(app, k);
  app.add_option("--image_name,--image", k.image,
                 "Container image of every pod of the job (scripts/build-image.sh builds one)")
      ->capture_default_str();
  app.add_option("--image_pull_policy", k.image_pull_policy, "Always, IfNotPresent or Never")
      ->check(CLI::IsMember({"Always", "IfNotPresent", "Never"}))
      ->capture_default_str();
  app.add_option("--master_resource_request", k.master_resource_request,
                 "Master pod requests: cpu=N|Nm, memory=N[Ki|Mi|Gi|...], gpu=N (nvidia.com/gpu), "
                 "<vendor>/<name>=N")
      ->capture_default_str();
  app.add_option("--master_resource_limit", k.master_resource_limit,
                 "Master pod limits, same syntax (default: the request)");
  app.add_option("--worker_resource_request", k.worker_resource_request,
                 "Worker pod requests, same syntax")
      ->capture_default_str();
  app.add_option("--worker_resource_limit", k.worker_resource_limit,
                 "Worker pod limits (default: the request); a worker over its memory limit is "
                 "OOMKilled and not relaunched");
  app.add_option("--ps_resource_request", k.ps_resource_request, "PS pod requests, same syntax")
      ->capture_default_str();
  app.add_option("--ps_resource_limit", k.ps_resource_limit,
                 "PS pod limits (default: the request)");
  app.add_option("--master_pod_priority", k.master_pod_priority, "PriorityClass of the master pod");
  app.add_option("--worker_pod_priority", k.worker_pod_priority,
                 "PriorityClass of the worker pods, or a fraction f: ceil(f x num_workers) workers "
                 "get class \"high\", the rest \"low\" (ElasticDL's form)");
  app.add_option("--ps_pod_priority", k.ps_pod_priority, "PriorityClass of the PS pods");
  app.add_option("--volume", k.volume,
                 "Volumes of every pod: claim_name=PVC,mount_path=/p[,sub_path=s] or "
                 "host_path=/h,mount_path=/p[,type=Directory]; ';' separates several");
  app.add_option("--envs", k.envs, "Environment of every pod: NAME=VALUE,NAME2=VALUE2");
  app.add_option("--termination_grace_period", k.termination_grace_period_s,
                 "Seconds a deleted or preempted pod gets between SIGTERM and SIGKILL")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--ps_port", k.ps_port, "Port of the PS pods and their Services")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--service_account", k.service_account,
                 "Service account of the master pod (needs the Role in scripts/k8s/rbac.yaml)")
      ->capture_default_str();
  app.add_option("--database_secret", k.database_secret,
                 "A Secret with the database's credentials for data flags that name a "
                 "database: its key \"password\" becomes PGPASSWORD in every pod, and its keys "
                 "are files in /etc/edl/database (e.g. sslrootcert=/etc/edl/database/ca.crt); "
                 "never put a password in the URL (docs/sql.md)");
  if (for_master) {
    app.add_option("--job_config_map", k.config_map,
                   "The job's ConfigMap, mounted into every pod (set by the client)");
    app.add_option("--job_secret", k.secret_name,
                   "The job's Secret, mounted into every pod (set by the client)");
    app.add_option("--hold_outputs", k.hold_outputs_s,
                   "Seconds to hold --output and --prediction_output for the client that "
                   "submitted the job to fetch them (set by the client)")
        ->check(CLI::Range(0, 86400));
  }
}

}  // namespace edl::cmd
