#include "roles/cluster/kube_cluster.h"

#include <csignal>
#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "kube/client.h"
#include "kube/json_path.h"
#include "kube/pod_status.h"
#include "kube/watch.h"
#include "roles/cluster/kube_pod_parts.h"

namespace edl::roles::cluster {
namespace {

using Json = nlohmann::json;

// "ps-0" -> {"ps", "0"}; "worker-12" -> {"worker", "12"}.
std::pair<std::string, std::string> RoleAndIndex(const std::string& name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string::npos) return {name, ""};
  return {name.substr(0, dash), name.substr(dash + 1)};
}

}  // namespace

Result<std::unique_ptr<KubeCluster>> KubeCluster::Create(kube::Client& client,
                                                         KubeClusterOptions options) {
  EDL_RETURN_IF_ERROR(CheckDnsLabel("--job_name", options.job_name, 40));
  if (options.image.empty())
    return InvalidArgument("--image_name is empty: the job's pods need an image");
  std::unique_ptr<KubeCluster> cluster(new KubeCluster(client, std::move(options)));
  const std::string selector = "edl-job=" + cluster->options_.job_name + ",edl-role!=master";
  // Pods of this job left from before (a previous master) would compete
  // with the ones about to be created.
  EDL_ASSIGN_OR_RETURN(Json list, client.List(kube::Pods(), cluster->namespace_,
                                              kube::ListOptions{selector, "", "", 500}));
  if (list.contains("items") && list["items"].is_array()) {
    for (const Json& pod : list["items"]) {
      const std::string name = kube::StringAt(pod, {"metadata", "name"});
      const std::string phase = kube::StringAt(pod, {"status", "phase"});
      const std::string process = kube::StringAt(pod, {"metadata", "labels", "edl-process"});
      const int64_t incarnation =
          std::atoll(kube::StringAt(pod, {"metadata", "annotations", "edl/incarnation"}).c_str());
      KubeCluster& c = *cluster;
      c.incarnations_[process] = std::max(c.incarnations_[process], incarnation);
      if (c.options_.adopt && phase != "Succeeded" && phase != "Failed" && !process.empty() &&
          kube::StringAt(pod, {"metadata", "deletionTimestamp"}).empty() &&
          !c.live_.count(process)) {
        const std::string uid = kube::StringAt(pod, {"metadata", "uid"});
        Pod& p = c.pods_[uid];
        p.name = process;
        p.incarnation = incarnation;
        p.pod_name = name;
        p.last_phase = phase;
        c.live_[process] = uid;
        EDL_LOG(INFO) << "adopted pod " << name << " of " << process << " (" << phase << ")";
        continue;
      }
      EDL_LOG(WARNING) << "deleting pod " << name << " left over from an earlier run of job "
                       << cluster->options_.job_name;
      kube::DeleteOptions d;
      d.grace_period_seconds = 0;
      auto r = client.Delete(kube::Pods(), cluster->namespace_, name, d);
      if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
    }
  }
  kube::Reflector::Options ro;
  ro.resource = kube::Pods();
  ro.ns = cluster->namespace_;
  ro.label_selector = selector;
  KubeCluster* self = cluster.get();
  cluster->reflector_ = std::make_unique<kube::Reflector>(
      client, ro, [self](const kube::WatchEvent& e) { self->OnEvent(e); });
  cluster->reflector_->Start();
  if (!cluster->reflector_->WaitForSync(std::chrono::seconds(30))) {
    return Unavailable("cannot list the pods of job " + cluster->options_.job_name +
                       " in namespace " + cluster->namespace_ + " within 30 s");
  }
  return cluster;
}

KubeCluster::KubeCluster(kube::Client& client, KubeClusterOptions options)
    : client_(client), options_(std::move(options)) {
  namespace_ =
      options_.namespace_name.empty() ? client_.default_namespace() : options_.namespace_name;
}

KubeCluster::~KubeCluster() {
  if (reflector_) reflector_->Stop();
}

std::string KubeCluster::PodJson(const ProcessSpec& spec, int64_t incarnation,
                                 const std::string& pod_name) const {
  const auto [role, index] = RoleAndIndex(spec.name);
  Json labels = JobLabels(options_.job_name, role, "edl-master");
  labels["edl-index"] = index;
  labels["edl-process"] = spec.name;
  Json metadata = {{"name", pod_name},
                   {"labels", labels},
                   {"annotations", {{"edl/incarnation", std::to_string(incarnation)}}}};
  if (!options_.owner_uid.empty()) {
    metadata["ownerReferences"] = Json::array({{{"apiVersion", options_.owner_api_version},
                                                {"kind", options_.owner_kind},
                                                {"name", options_.owner_name},
                                                {"uid", options_.owner_uid},
                                                // The Job's controller claims only its
                                                // own pods (the master's).
                                                {"controller", options_.owner_kind != "Job"},
                                                {"blockOwnerDeletion", false}}});
  }
  Json env = DownwardApiEnv();
  env.push_back({{"name", "EDL_JOB"}, {"value", options_.job_name}});
  env.push_back({{"name", "EDL_PROCESS"}, {"value", spec.name}});
  for (const auto& [k, v] : options_.env) env.push_back({{"name", k}, {"value", v}});
  for (const auto& [k, v] : spec.env) env.push_back({{"name", k}, {"value", v}});

  const PodOptions po = options_.pod_options ? options_.pod_options(spec.name) : PodOptions{};
  const Json resources = ResourcesJson(po.requests, po.limits);
  Json mounts = Json::array(), volumes = Json::array();
  AddJobVolumes(options_.config_map, options_.secret_name, options_.volumes, &volumes, &mounts);
  AddDatabaseSecret(options_.database_secret, &env, &volumes, &mounts);
  Json args = Json::array();
  std::vector<std::string> command = options_.command;
  for (const std::string& a : spec.args) args.push_back(a);
  Json container = {{"name", "main"},
                    {"image", options_.image},
                    {"imagePullPolicy", options_.image_pull_policy},
                    {"command", command},
                    {"args", args},
                    {"env", env},
                    {"resources", resources},
                    {"volumeMounts", mounts}};
  Json pod_spec = {{"restartPolicy", "Never"},
                   {"terminationGracePeriodSeconds", options_.termination_grace_period_s},
                   {"containers", Json::array({container})},
                   {"volumes", volumes}};
  if (!options_.service_account.empty()) pod_spec["serviceAccountName"] = options_.service_account;
  if (!po.priority_class.empty()) pod_spec["priorityClassName"] = po.priority_class;
  return Json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", pod_spec}}
      .dump();
}

Status KubeCluster::Launch(const ProcessSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (live_.count(spec.name)) {
    return Status(StatusCode::kAlreadyExists, spec.name + " is already running");
  }
  const int64_t incarnation = ++incarnations_[spec.name];
  const std::string pod_name =
      options_.job_name + "-" + spec.name + "-" + std::to_string(incarnation);
  Json pod = Json::parse(PodJson(spec, incarnation, pod_name));
  auto created = client_.Create(kube::Pods(), namespace_, pod);
  if (!created.ok() && created.status().code() == StatusCode::kAlreadyExists) {
    // A create re-sent on a fresh connection after the first one landed:
    // the pod is ours if it carries this incarnation.
    auto existing = client_.Get(kube::Pods(), namespace_, pod_name);
    if (existing.ok() &&
        kube::StringAt(*existing, {"metadata", "annotations", "edl/incarnation"}) ==
            std::to_string(incarnation) &&
        kube::StringAt(*existing, {"metadata", "labels", "edl-process"}) == spec.name) {
      created = existing;
    }
  }
  if (!created.ok()) {
    --incarnations_[spec.name];
    return created.status().WithPrefix("creating pod " + pod_name + " for " + spec.name);
  }
  const std::string uid = kube::StringAt(*created, {"metadata", "uid"});
  if (uid.empty()) return Internal("the API server returned pod " + pod_name + " without a uid");
  Pod& p = pods_[uid];
  p.name = spec.name;
  p.incarnation = incarnation;
  p.pod_name = pod_name;
  p.last_phase = "Pending";
  live_[spec.name] = uid;
  EDL_LOG(INFO) << "created pod " << pod_name << " for " << spec.name;
  return Status::Ok();
}

Status KubeCluster::Signal(const std::string& name, int signal) {
  std::string uid, pod_name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(name);
    if (it == live_.end()) return NotFound(name + " is not running");
    uid = it->second;
    Pod& p = pods_[uid];
    p.deleted_by_us = true;
    pod_name = p.pod_name;
  }
  kube::DeleteOptions d;
  d.grace_period_seconds = signal == SIGKILL ? 0 : options_.termination_grace_period_s;
  d.precondition_uid = uid;
  auto r = client_.Delete(kube::Pods(), namespace_, pod_name, d);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
    return r.status().WithPrefix("deleting pod " + pod_name);
  }
  return Status::Ok();
}

void KubeCluster::OnEvent(const kube::WatchEvent& event) {
  using Type = kube::WatchEvent::Type;
  if (event.type != Type::kAdded && event.type != Type::kModified && event.type != Type::kDeleted) {
    return;
  }
  const Json& pod = event.object;
  const std::string uid = kube::StringAt(pod, {"metadata", "uid"});
  std::string delete_name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end() || reported_uids_.count(uid)) return;
    Pod& p = it->second;
    const bool deleted = event.type == Type::kDeleted;
    const kube::PodFate fate = kube::ClassifyPod(pod, deleted, p.deleted_by_us);
    if (fate.kind == kube::PodFate::Kind::kAlive) {
      const std::string phase = kube::StringAt(pod, {"status", "phase"});
      if (phase != p.last_phase) {
        if (phase == "Running") {
          EDL_LOG(INFO) << p.name << ": pod " << p.pod_name << " running on node "
                        << kube::StringAt(pod, {"spec", "nodeName"}) << " at "
                        << kube::StringAt(pod, {"status", "podIP"});
        }
        p.last_phase = phase;
      }
      const std::string unschedulable = kube::UnschedulableMessage(pod);
      if (!unschedulable.empty()) p.unschedulable = unschedulable;
      if (!unschedulable.empty() && !p.logged_unschedulable) {
        EDL_LOG(INFO) << p.name << ": pod " << p.pod_name
                      << " waits for capacity: " << unschedulable;
        p.logged_unschedulable = true;
      }
      return;
    }
    if (!deleted) {
      // Terminal but still there (evicted, crashed, completed): remove it,
      // and report the exit once it is gone.
      p.last_json = pod.dump();
      if (p.delete_sent) return;
      p.delete_sent = true;
      delete_name = p.pod_name;
    } else {
      ProcessExit exit;
      exit.name = p.name;
      exit.incarnation = p.incarnation;
      exit.detail =
          (fate.detail.empty() ? std::string(kube::PodFateName(fate.kind)) : fate.detail) +
          "; pod " + p.pod_name;
      switch (fate.kind) {
        case kube::PodFate::Kind::kCompleted: exit.code = 0; break;
        case kube::PodFate::Kind::kKilled:
          exit.signaled = true;
          exit.code = fate.exit_code - 128;
          break;
        case kube::PodFate::Kind::kFailed:
          exit.code = fate.exit_code > 0 ? fate.exit_code : 1;
          break;
        case kube::PodFate::Kind::kOomKilled:
          exit.oom_killed = true;
          exit.signaled = true;
          exit.code = SIGKILL;
          break;
        case kube::PodFate::Kind::kDisrupted:
        case kube::PodFate::Kind::kGone:
        case kube::PodFate::Kind::kAlive:
          exit.disrupted = true;
          exit.code = fate.exit_code;
          break;
      }
      reported_uids_.insert(uid);
      auto live = live_.find(p.name);
      if (live != live_.end() && live->second == uid) live_.erase(live);
      exits_.push_back(exit);
      pods_.erase(it);
      exited_cv_.notify_all();
      return;
    }
  }
  kube::DeleteOptions d;
  d.grace_period_seconds = 0;
  d.precondition_uid = uid;
  auto r = client_.Delete(kube::Pods(), namespace_, delete_name, d);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
    EDL_LOG(WARNING) << "cannot delete finished pod " << delete_name << ": "
                     << r.status().message();
  }
}

std::optional<ProcessExit> KubeCluster::WaitExit(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!exited_cv_.wait_for(lock, timeout, [&] { return !exits_.empty(); })) return std::nullopt;
  ProcessExit exit = exits_.front();
  exits_.pop_front();
  return exit;
}

std::vector<std::string> KubeCluster::Running() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, uid] : live_) names.push_back(name);
  return names;
}

std::string KubeCluster::PendingReason(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto live = live_.find(name);
  if (live == live_.end()) return "";
  auto pod = pods_.find(live->second);
  return pod == pods_.end() ? "" : pod->second.unschedulable;
}

std::string KubeCluster::PodName(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(name);
  if (it == live_.end()) return "";
  auto p = pods_.find(it->second);
  return p == pods_.end() ? "" : p->second.pod_name;
}

Result<std::string> KubeCluster::Expose(const std::string& name, int port) {
  const std::string service_name = options_.job_name + "-" + name;
  EDL_RETURN_IF_ERROR(CheckDnsLabel("service name", service_name));
  // The labels of the pods behind it: component and role "ps", its index
  // and process, as on every other object of the job.
  const auto [role, index] = RoleAndIndex(name);
  Json labels = JobLabels(options_.job_name, role, "edl-master");
  labels["edl-index"] = index;
  labels["edl-process"] = name;
  Json metadata = {{"name", service_name}, {"labels", labels}};
  if (!options_.owner_uid.empty()) {
    metadata["ownerReferences"] = Json::array({{{"apiVersion", options_.owner_api_version},
                                                {"kind", options_.owner_kind},
                                                {"name", options_.owner_name},
                                                {"uid", options_.owner_uid},
                                                {"controller", options_.owner_kind != "Job"}}});
  }
  Json service = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", metadata},
      {"spec",
       {{"selector", {{"edl-job", options_.job_name}, {"edl-process", name}}},
        {"ports",
         Json::array(
             {{{"name", "rpc"}, {"port", port}, {"targetPort", port}, {"protocol", "TCP"}}})}}}};
  auto created = client_.Create(kube::Services(), namespace_, service);
  if (!created.ok() && created.status().code() == StatusCode::kAlreadyExists) {
    created = client_.Get(kube::Services(), namespace_, service_name);
  }
  if (!created.ok()) return created.status().WithPrefix("creating service " + service_name);
  const std::string ip = kube::StringAt(*created, {"spec", "clusterIP"});
  if (ip.empty() || ip == "None") {
    return Internal("service " + service_name + " got no cluster IP");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    services_.push_back(service_name);
  }
  EDL_LOG(INFO) << name << " is reachable at service " << service_name << " (" << ip << ":" << port
                << ")";
  return ip + ":" + std::to_string(port);
}

void KubeCluster::DeleteServices() {
  std::vector<std::string> services;
  {
    std::lock_guard<std::mutex> lock(mu_);
    services.swap(services_);
  }
  for (const std::string& s : services) {
    auto r = client_.Delete(kube::Services(), namespace_, s, {});
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
      EDL_LOG(WARNING) << "cannot delete service " << s << ": " << r.status().message();
    }
  }
}

}  // namespace edl::roles::cluster
