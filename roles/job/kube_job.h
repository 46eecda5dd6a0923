// The client's side of a job on Kubernetes (edl train|predict
// --cluster=kube, edl status|logs|stop|list --cluster=kube): validate the
// job here, create its Secret (the RPC secret), ConfigMap (model spec and
// job spec), master pod and master Service, follow the master's log until
// the job ends, and control running jobs through the API server.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "roles/job/process_options.h"

namespace edl::roles::job {

inline constexpr int kKubeMasterPort = 50001;
// Master pods the Job controller may replace after failures (disruptions,
// as preemption and eviction, do not count) before the job fails.
inline constexpr int kKubeMasterBackoffLimit = 10;

struct KubeSubmitOptions {
  bool detach = false;    // return once the job is submitted
  std::string yaml_path;  // write the manifests here instead of submitting
  FILE* out = stdout;     // the master's log and the client's messages
};

// The objects of a job, as JSON text: Secret, ConfigMap, master Job
// (batch/v1), master Service (in that order). `m` is the job as the client parsed it;
// the master pod's command line is derived from it. Errors name the flag.
Result<std::vector<std::string>> BuildKubeJobManifests(const MasterProcessOptions& m,
                                                       const std::string& secret);

// Validates `m` (model spec, data, Kubernetes flags), then submits it (or
// writes --yaml) and, unless detached, follows the master's log and
// returns the job's outcome: OK when the master exited 0.
Status SubmitKubeJob(const MasterProcessOptions& m, const KubeSubmitOptions& s);

// Job control: `access` says how to reach the cluster (kubeconfig,
// context, namespace). Each prints to `out`.
Status KubeJobStatus(const KubeJobOptions& access, const std::string& job, FILE* out);
// The log of the job's master (process "") or of a process ("worker-0",
// "ps-1": its newest pod); `follow` streams until the pod ends.
Status KubeJobLogs(const KubeJobOptions& access, const std::string& job, const std::string& process,
                   bool follow, FILE* out);
// Deletes the master pod (gracefully: the master stops its pods; the
// garbage collector removes what the job owned).
Status KubeStopJob(const KubeJobOptions& access, const std::string& job, FILE* out);
// Asks the job's master for `num_workers` workers (it creates pods, or asks
// the newest workers to hand back their tasks and leave), through the API
// server's service proxy, with the job secret read from the job's Secret.
Status KubeScaleJob(const KubeJobOptions& access, const std::string& job, int num_workers,
                    FILE* out);
// Waits until the job's master Job completes (OK, "job JOB: succeeded" to
// `out`) or fails (the error says why), polling the API server;
// DeadlineExceeded after `timeout_s` (0: no limit).
Status KubeWaitJob(const KubeJobOptions& access, const std::string& job, double timeout_s,
                   FILE* out);
// The jobs in the namespace: one line each with the master pod's phase.
Status KubeListJobs(const KubeJobOptions& access, FILE* out);
// The job page of a job on Kubernetes on this machine: serves
// http://127.0.0.1:`port`/ (0: a free port), relaying GET /, /status and
// /series to the master through the API server's service proxy (so the
// user's RBAC on services/proxy guards it, as for `edl status`), prints the
// URL to `out` and serves until the process is ended (Ctrl-C). Returns only
// errors: no such job, its master not running or not reachable.
Status KubeDashboard(const KubeJobOptions& access, const std::string& job, int port, FILE* out);

}  // namespace edl::roles::job
