// JobController: one pass lists the Jobs and their pods, counts what ended,
// and starts, replaces or stops pods (see job_controller.h).
#include "tests/fakekube/server/job_controller.h"

#include <algorithm>

#include "base/logging.h"

namespace edl::fakekube {
namespace {

using Clock = std::chrono::steady_clock;

double Now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string Str(const Json& o, std::initializer_list<const char*> path) {
  const Json* at = &o;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return "";
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : "";
}

bool Terminal(const Json& pod) {
  const std::string phase = Str(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

// Whether the pod has a condition of `type` with `status`.
bool HasCondition(const Json& pod, const std::string& type, const std::string& status) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return false;
  for (const Json& c : pod["status"]["conditions"]) {
    if (c.value("type", "") == type && c.value("status", "") == status) return true;
  }
  return false;
}

// The exit codes of the pod's terminated containers.
std::vector<int> ExitCodes(const Json& pod) {
  std::vector<int> codes;
  if (!pod.contains("status")) return codes;
  for (const Json& c : pod["status"].value("containerStatuses", Json::array())) {
    if (c.contains("state") && c["state"].contains("terminated")) {
      codes.push_back(c["state"]["terminated"].value("exitCode", 0));
    }
  }
  return codes;
}

// The action of the first spec.podFailurePolicy rule that matches this
// failed pod (its onPodConditions holds, or its onExitCodes, operator In or
// NotIn, matches a container's non-zero exit code); "Count" if none does.
// *why says which rule, for a FailJob.
std::string PolicyAction(const Json& job, const Json& pod, std::string* why) {
  if (!job.contains("spec") || !job["spec"].contains("podFailurePolicy")) return "Count";
  const Json rules = job["spec"]["podFailurePolicy"].value("rules", Json::array());
  for (size_t i = 0; i < rules.size(); ++i) {
    const Json& rule = rules[i];
    bool match = false;
    for (const Json& c : rule.value("onPodConditions", Json::array())) {
      match = match || HasCondition(pod, c.value("type", ""), c.value("status", ""));
    }
    if (rule.contains("onExitCodes")) {
      const Json& e = rule["onExitCodes"];
      const std::vector<int> values = e.value("values", std::vector<int>{});
      const bool in = e.value("operator", "In") == "In";
      for (int code : ExitCodes(pod)) {
        const bool listed = std::find(values.begin(), values.end(), code) != values.end();
        if (code != 0 && listed == in) {
          match = true;
          *why = "Container main for pod " + Str(pod, {"metadata", "namespace"}) + "/" +
                 Str(pod, {"metadata", "name"}) + " failed with exit code " + std::to_string(code) +
                 " matching " + rule.value("action", "") + " rule at index " + std::to_string(i);
        }
      }
    }
    if (match) return rule.value("action", "Count");
  }
  return "Count";
}

bool OwnedBy(const Json& pod, const std::string& uid) {
  if (!pod.contains("metadata") || !pod["metadata"].contains("ownerReferences")) return false;
  for (const Json& ref : pod["metadata"]["ownerReferences"]) {
    if (ref.value("uid", "") == uid && ref.value("controller", false)) return true;
  }
  return false;
}

constexpr char kTracking[] = "batch.kubernetes.io/job-tracking";

bool HasTracking(const Json& pod) {
  for (const Json& f : pod["metadata"].value("finalizers", Json::array())) {
    if (f == kTracking) return true;
  }
  return false;
}

// Drops the job-tracking finalizer (the pod was counted, or its Job is gone).
void Release(Store& store, const Json& pod) {
  if (!HasTracking(pod)) return;
  (void)store.Update("pods", Str(pod, {"metadata", "namespace"}), Str(pod, {"metadata", "name"}),
                     [](Json& p) {
                       Json kept = Json::array();
                       for (const Json& f : p["metadata"].value("finalizers", Json::array())) {
                         if (f != kTracking) kept.push_back(f);
                       }
                       if (kept.empty()) {
                         p["metadata"].erase("finalizers");
                       } else {
                         p["metadata"]["finalizers"] = kept;
                       }
                     });
}

Json Condition(const std::string& type, const std::string& reason, const std::string& message) {
  const std::string now = Rfc3339(Now());
  return {{"type", type},       {"status", "True"},     {"reason", reason},
          {"message", message}, {"lastProbeTime", now}, {"lastTransitionTime", now}};
}

}  // namespace

JobController::JobController(Store& store, Options options)
    : store_(store),
      options_(options),
      // Events drive it; the short period serves pods waiting out a back-off.
      loop_(store,
            {.name = "JobController",
             .resources = {"pods", "jobs"},
             .resync = std::chrono::milliseconds(200)},
            [this] { RunOnce(); }) {}

JobController::~JobController() { Stop(); }

void JobController::Start() { loop_.Start(); }

void JobController::Stop() { loop_.Stop(); }

void JobController::RunOnce() {
  std::lock_guard<std::mutex> pass(pass_mu_);
  ApiResult<Store::ListResult> jobs = store_.List("jobs", "", "", "");
  if (!jobs.ok()) return;
  std::set<std::string> live;
  for (const Json& job : jobs.value->items) {
    const std::string uid = Str(job, {"metadata", "uid"});
    if (Str(job, {"metadata", "deletionTimestamp"}).empty()) live.insert(uid);
    Sync(job, jobs_[uid]);
  }
  // Pods whose Job is gone are no longer tracked.
  ApiResult<Store::ListResult> pods = store_.List("pods", "", "", "");
  if (pods.ok()) {
    for (const Json& p : pods.value->items) {
      if (!HasTracking(p)) continue;
      bool owned = false;
      for (const Json& ref : p["metadata"].value("ownerReferences", Json::array())) {
        owned = owned || (ref.value("kind", "") == "Job" && live.count(ref.value("uid", "")));
      }
      if (!owned) Release(store_, p);
    }
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    it = live.count(it->first) ? std::next(it) : jobs_.erase(it);
  }
}

void JobController::Sync(const Json& job, Tracked& t) {
  const std::string ns = Str(job, {"metadata", "namespace"});
  const std::string name = Str(job, {"metadata", "name"});
  const std::string uid = Str(job, {"metadata", "uid"});
  if (!Str(job, {"metadata", "deletionTimestamp"}).empty()) return;
  if (job.contains("status") && job["status"].contains("conditions")) {
    for (const Json& c : job["status"]["conditions"]) {
      const std::string type = c.value("type", "");
      if ((type == "Complete" || type == "Failed") && c.value("status", "") == "True") return;
    }
  }
  ApiResult<Store::ListResult> listed = store_.List("pods", ns, "", "");
  if (!listed.ok()) return;
  std::vector<Json> pods;
  for (const Json& p : listed.value->items) {
    if (OwnedBy(p, uid)) pods.push_back(p);
  }
  bool succeeded = false;
  std::string fail_job;  // a FailJob rule matched: why
  auto count = [&](const Json& pod, bool gone) {
    const std::string pod_uid = Str(pod, {"metadata", "uid"});
    if (!t.counted.insert(pod_uid).second) return;
    std::string why;
    const std::string action =
        Str(pod, {"status", "phase"}) == "Succeeded" ? "" : PolicyAction(job, pod, &why);
    if (Str(pod, {"status", "phase"}) == "Succeeded") {
      succeeded = true;
    } else if (action == "FailJob") {
      fail_job = why;
      ++t.failed;
    } else if (action == "Ignore") {
      EDL_LOG(INFO) << "job controller: " << ns << "/" << name << ": pod "
                    << Str(pod, {"metadata", "name"}) << " disrupted; replaced, not counted";
    } else {
      ++t.failed;
      ++t.consecutive;
      t.last_failure = Clock::now();
      EDL_LOG(INFO) << "job controller: " << ns << "/" << name << ": pod "
                    << Str(pod, {"metadata", "name"}) << (gone ? " vanished" : " failed") << " ("
                    << t.failed << " failed)";
    }
  };
  // Pods gone since the last pass count as they were last seen.
  std::set<std::string> current;
  for (const Json& p : pods) current.insert(Str(p, {"metadata", "uid"}));
  for (auto it = t.seen.begin(); it != t.seen.end();) {
    if (current.count(it->first)) {
      ++it;
      continue;
    }
    count(it->second, /*gone=*/true);
    it = t.seen.erase(it);
  }
  int active = 0, terminating = 0;
  for (const Json& p : pods) {
    t.seen[Str(p, {"metadata", "uid"})] = p;
    if (Terminal(p)) {
      count(p, /*gone=*/false);
      Release(store_, p);
    } else if (!Str(p, {"metadata", "deletionTimestamp"}).empty()) {
      ++terminating;
    } else {
      ++active;
    }
  }
  const Json spec = job.value("spec", Json::object());
  const int64_t backoff_limit = spec.value("backoffLimit", int64_t{6});
  Json conditions = Json::array();
  std::string completion;
  if (succeeded) {
    conditions.push_back(Condition("Complete", "", ""));
    completion = Rfc3339(Now());
  } else if (!fail_job.empty() || t.failed > backoff_limit) {
    conditions.push_back(fail_job.empty() ? Condition("Failed", "BackoffLimitExceeded",
                                                      "Job has reached the specified backoff limit")
                                          : Condition("Failed", "PodFailurePolicy", fail_job));
    for (const Json& p : pods) {
      if (!Terminal(p) && Str(p, {"metadata", "deletionTimestamp"}).empty()) {
        (void)store_.Delete("pods", ns, Str(p, {"metadata", "name"}), {});
      }
    }
    active = 0;
  } else if (active + terminating == 0) {
    auto delay = std::chrono::milliseconds(0);
    if (t.consecutive > 0) {
      delay = options_.backoff * (int64_t{1} << std::min(t.consecutive - 1, 16));
      delay = std::min(delay, options_.max_backoff);
    }
    if (Clock::now() - t.last_failure >= delay) {
      Json tmpl = spec.value("template", Json::object());
      Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
      pod["metadata"] = tmpl.value("metadata", Json::object());
      pod["metadata"]["generateName"] = name + "-";
      for (const char* key : {"batch.kubernetes.io/job-name", "job-name"}) {
        pod["metadata"]["labels"][key] = name;
      }
      for (const char* key : {"batch.kubernetes.io/controller-uid", "controller-uid"}) {
        pod["metadata"]["labels"][key] = uid;
      }
      // Held until counted, as the real controller's pod tracking does.
      pod["metadata"]["finalizers"] = Json::array({kTracking});
      pod["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "batch/v1"},
                                                         {"kind", "Job"},
                                                         {"name", name},
                                                         {"uid", uid},
                                                         {"controller", true},
                                                         {"blockOwnerDeletion", true}}});
      pod["spec"] = tmpl.value("spec", Json::object());
      ApiResult<Json> created = store_.Create("pods", ns, pod);
      if (created.ok()) {
        ++active;
        t.seen[Str(*created.value, {"metadata", "uid"})] = *created.value;
      } else {
        EDL_LOG(WARNING) << "job controller: " << ns << "/" << name
                         << ": cannot create a pod: " << created.error.message;
      }
    }
  }
  store_.Update("jobs", ns, name, [&](Json& j) {
    Json& status = j["status"];
    if (!status.contains("startTime")) status["startTime"] = Rfc3339(Now());
    status["active"] = active;
    status["failed"] = t.failed;
    status["succeeded"] = succeeded ? 1 : 0;
    status["uncountedTerminatedPods"] = Json::object();
    if (!conditions.empty()) status["conditions"] = conditions;
    if (!completion.empty()) status["completionTime"] = completion;
    if (active == 0) status.erase("active");
    if (t.failed == 0) status.erase("failed");
    if (!succeeded) status.erase("succeeded");
  });
}

}  // namespace edl::fakekube
