// Following a job on Kubernetes until it ends (roles/job/kube_follow.h).
#include "roles/job/kube_follow.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>

#include "kube/client.h"
#include "kube/json_path.h"
#include "kube/pod_status.h"
#include "roles/job/kube_job.h"
#include "roles/job/kube_job_parts.h"

namespace edl::roles::job {
namespace {

using Json = nlohmann::json;
using kube::StringAt;

// "Complete", "Failed" (with the message), or "" while the Job runs.
std::string JobOutcome(const Json& job, std::string* message) {
  for (const Json& c : job["status"].value("conditions", Json::array())) {
    const std::string type = c.value("type", "");
    if ((type == "Complete" || type == "Failed") && c.value("status", "") == "True") {
      *message = c.value("message", "");
      return type;
    }
  }
  return "";
}

// How long the client waits out an API server that does not answer (a
// restart, 5xx answers) before it stops following; the job goes on.
constexpr auto kApiOutageTolerance = std::chrono::seconds(300);

// Whether the API server may answer differently in a moment.
bool Transient(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kInternal ||
         s.code() == StatusCode::kResourceExhausted || s.code() == StatusCode::kDeadlineExceeded;
}

}  // namespace

Status KubeWaitJob(const KubeJobOptions& access, const std::string& job, double timeout_s,
                   FILE* out) {
  EDL_ASSIGN_OR_RETURN(KubeConnection c, ConnectToKube(access));
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    auto master_job = c.client->Get(kube::Jobs(), c.ns, MasterName(job));
    if (!master_job.ok()) {
      if (master_job.status().code() == StatusCode::kNotFound) {
        return NotFound("job " + job + ": no Job " + MasterName(job) + " in namespace " + c.ns);
      }
      return master_job.status();
    }
    std::string message;
    const std::string outcome = JobOutcome(*master_job, &message);
    if (outcome == "Complete") {
      std::fprintf(out, "job %s: succeeded\n", job.c_str());
      return Status::Ok();
    }
    if (outcome == "Failed") {
      return Internal("job " + job + " failed" + (message.empty() ? "" : ": " + message) +
                      " (see `edl logs " + job + " --cluster=kube`)");
    }
    if (timeout_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
            timeout_s) {
      return DeadlineExceeded("job " + job + " still running after " +
                              std::to_string(static_cast<int64_t>(timeout_s)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));  // polling the API server
  }
}

Status FollowKubeJob(kube::Client& client, const std::string& ns, const std::string& job,
                     FILE* out) {
  const auto poll = std::chrono::milliseconds(500);
  std::string followed_uid, last_phase, last_message;
  bool streamed_once = false;
  auto last_answer = std::chrono::steady_clock::now();
  bool outage_told = false;
  while (true) {
    auto master_job = client.Get(kube::Jobs(), ns, MasterName(job));
    if (!master_job.ok()) {
      if (master_job.status().code() == StatusCode::kNotFound) {
        return Internal("job " + job + ": its Job " + MasterName(job) + " was deleted");
      }
      if (!Transient(master_job.status()) ||
          std::chrono::steady_clock::now() - last_answer > kApiOutageTolerance) {
        return master_job.status().WithPrefix("following job " + job);
      }
      if (!outage_told) {
        std::fprintf(out, "edl: the API server does not answer (%s); waiting for it\n",
                     master_job.status().message().c_str());
        std::fflush(out);
        outage_told = true;
      }
      std::this_thread::sleep_for(poll);
      continue;
    }
    last_answer = std::chrono::steady_clock::now();
    outage_told = false;
    std::string message;
    const std::string outcome = JobOutcome(*master_job, &message);
    auto pod = FindMasterPod(client, ns, job);
    if (outcome == "Complete") {
      // A job quicker than the polling: its master pod's log, which was
      // never followed, in one piece.
      if (pod.ok() && StringAt(*pod, {"metadata", "uid"}) != followed_uid) {
        auto log = client.GetRaw("/api/v1/namespaces/" + ns + "/pods/" +
                                 StringAt(*pod, {"metadata", "name"}) + "/log?container=main");
        if (log.ok()) {
          std::fwrite(log->data(), 1, log->size(), out);
          std::fflush(out);
        } else {
          std::fprintf(out, "edl: the master's log: %s\n", log.status().message().c_str());
        }
      }
      return Status::Ok();
    }
    if (outcome == "Failed") {
      std::string detail = message;
      if (pod.ok()) {
        const kube::PodFate fate = kube::ClassifyPod(*pod, false, false);
        detail = "master pod " + StringAt(*pod, {"metadata", "name"}) + " " +
                 (fate.detail.empty() ? "exited with code " + std::to_string(fate.exit_code)
                                      : fate.detail) +
                 (message.empty() ? "" : "; " + message);
      }
      return Internal("job " + job + " failed: " + detail + " (see `edl logs " + job +
                      " --cluster=kube`)");
    }
    if (!pod.ok()) {                      // between master pods
      std::this_thread::sleep_for(poll);  // polling the API server
      continue;
    }
    const std::string pod_name = StringAt(*pod, {"metadata", "name"});
    const std::string uid = StringAt(*pod, {"metadata", "uid"});
    const std::string phase = StringAt(*pod, {"status", "phase"});
    const std::string unschedulable = kube::UnschedulableMessage(*pod);
    if (uid != followed_uid && (phase == "Succeeded" || phase == "Failed")) {
      std::this_thread::sleep_for(poll);  // an old pod; its replacement comes
      continue;
    }
    if (phase != last_phase || unschedulable != last_message) {
      std::fprintf(out, "edl: master pod %s: %s%s\n", pod_name.c_str(), phase.c_str(),
                   unschedulable.empty() ? "" : (" (" + unschedulable + ")").c_str());
      std::fflush(out);
      last_phase = phase;
      last_message = unschedulable;
    }
    if (phase == "Pending" || uid == followed_uid) {
      std::this_thread::sleep_for(poll);
      continue;
    }
    // A master pod that runs (or ran): its log, to its end.
    if (streamed_once) {
      std::fprintf(out, "edl: the Job replaced the master: following %s\n", pod_name.c_str());
    }
    followed_uid = uid;
    streamed_once = true;
    const std::string log_path =
        "/api/v1/namespaces/" + ns + "/pods/" + pod_name + "/log?container=main&follow=true";
    auto sink = [out](std::string_view bytes) {
      std::fwrite(bytes.data(), 1, bytes.size(), out);
      std::fflush(out);
      return true;
    };
    Status streamed = client.Stream(log_path, sink);
    auto broke_at = std::chrono::steady_clock::now();
    if (!streamed.ok()) {
      std::fprintf(out, "edl: the master's log stream ended: %s\n", streamed.message().c_str());
    }
    // The pod ended (or the stream broke): the Job's conditions say what next.
    const auto deadline = std::chrono::steady_clock::now() + kApiOutageTolerance;
    while (std::chrono::steady_clock::now() < deadline) {
      auto again = client.Get(kube::Pods(), ns, pod_name);
      if (!again.ok() && Transient(again.status())) {
        std::this_thread::sleep_for(poll);  // the API server, not the pod
        continue;
      }
      const std::string now = again.ok() ? StringAt(*again, {"status", "phase"}) : "Gone";
      if (now != "Running") break;
      if (!streamed.ok()) {
        // From a second before it broke: a line may come twice, none is lost.
        const auto since = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now() - broke_at) +
                           std::chrono::seconds(2);
        streamed = client.Stream(log_path + "&sinceSeconds=" + std::to_string(since.count()), sink);
        broke_at = std::chrono::steady_clock::now();
        if (!streamed.ok()) std::this_thread::sleep_for(poll);
        continue;
      }
      std::this_thread::sleep_for(poll);
    }
    last_phase.clear();
  }
}

}  // namespace edl::roles::job
