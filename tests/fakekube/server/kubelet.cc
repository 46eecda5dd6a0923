// Kubelet: the sync loop that matches pods bound here to PodWorkers.
#include "tests/fakekube/server/kubelet.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/logging.h"
#include "tests/fakekube/server/pod_conditions.h"
#include "tests/fakekube/server/pod_worker.h"

namespace edl::fakekube {
namespace {

std::string Field(const Json& object, const char* a, const char* b) {
  if (!object.contains(a) || !object[a].is_object() || !object[a].contains(b) ||
      !object[a][b].is_string()) {
    return "";
  }
  return object[a][b].get<std::string>();
}

}  // namespace

Kubelet::Kubelet(Store& store, Options options)
    : store_(store),
      options_(std::move(options)),
      loop_(store,
            {.name = "Kubelet",
             .resources = {"pods", "configmaps", "secrets"},
             .resync = std::chrono::seconds(5)},
            [this] { SyncOnce(); }) {}

Kubelet::~Kubelet() { Stop(); }

Status Kubelet::Start() {
  if (options_.root_dir.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "edl-fake-kubelet-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Internal("kubelet: cannot create a temporary root directory in " +
                      std::filesystem::temp_directory_path().string());
    }
    options_.root_dir = pattern;
    own_root_ = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(options_.root_dir, ec);
    if (ec) return Internal("kubelet: creating " + options_.root_dir + ": " + ec.message());
  }
  if (!options_.log_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.log_dir, ec);
  }
  loop_.Start();
  return Status::Ok();
}

void Kubelet::Stop() {
  if (!loop_.Stop()) return;
  std::lock_guard<std::mutex> lock(sync_mu_);
  for (auto& [uid, worker] : workers_) worker->Kill();
  workers_.clear();  // joins
  if (own_root_) {
    std::error_code ec;
    std::filesystem::remove_all(options_.root_dir, ec);
  }
}

std::string Kubelet::AllocatePodIp() {
  // <block>0.1 .. <block>255.254, never .0 or .255 in the last byte.
  while ((next_ip_ & 0xff) == 0 || (next_ip_ & 0xff) == 0xff) ++next_ip_;
  EDL_CHECK(next_ip_ < 0x10000) << "the fake kubelet ran out of pod IPs";
  uint32_t n = next_ip_++;
  return pod_ips_.prefix() + std::to_string(n >> 8) + "." + std::to_string(n & 0xff);
}

void Kubelet::SyncOnce() {
  std::lock_guard<std::mutex> lock(sync_mu_);
  ApiResult<Store::ListResult> listed = store_.List("pods", "", "", "");
  if (!listed.ok()) {
    EDL_LOG(WARNING) << "kubelet: listing pods: " << listed.error.message;
    return;
  }
  std::set<std::string> present;
  for (const Json& pod : listed.value->items) {
    const std::string node = Field(pod, "spec", "nodeName");
    if (std::find(options_.nodes.begin(), options_.nodes.end(), node) == options_.nodes.end()) {
      continue;
    }
    const std::string uid = Field(pod, "metadata", "uid");
    const std::string ns = Field(pod, "metadata", "namespace");
    const std::string name = Field(pod, "metadata", "name");
    present.insert(uid);
    auto it = workers_.find(uid);
    if (it == workers_.end()) {
      if (IsTerminal(pod)) continue;  // finished before we saw it
      if (IsDeleting(pod)) {          // never started here: nothing to stop
        ApiResult<Json> removed = store_.Remove("pods", ns, name);
        (void)removed;
        continue;
      }
      if (!pod["spec"].contains("containers") || !pod["spec"]["containers"].is_array() ||
          pod["spec"]["containers"].empty()) {
        continue;  // the store rejects these; nothing to run
      }
      const std::string dir = (std::filesystem::path(options_.root_dir) / uid).string();
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      auto worker = std::make_unique<PodWorker>(store_, options_, pod, AllocatePodIp(), dir);
      worker->Start();
      workers_.emplace(uid, std::move(worker));
      continue;
    }
    PodWorker& worker = *it->second;
    if (IsDeleting(pod)) {
      if (worker.finished()) {
        ApiResult<Json> removed = store_.Remove("pods", ns, name);
        (void)removed;
        continue;
      }
      double grace = 30;
      const Json& meta = pod["metadata"];
      if (meta.contains("deletionGracePeriodSeconds") &&
          meta["deletionGracePeriodSeconds"].is_number()) {
        grace = meta["deletionGracePeriodSeconds"].get<double>();
      }
      worker.Terminate(grace);
    }
    worker.Notify();
  }
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    it->second->Kill();
    const std::string uid = it->first;
    it = workers_.erase(it);  // joins
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(options_.root_dir) / uid, ec);
  }
}

Status Kubelet::Evict(const std::string& ns, const std::string& name, const std::string& message) {
  ApiResult<Json> pod = store_.Get("pods", ns, name);
  if (!pod.ok()) return NotFound("pods \"" + name + "\" not found in namespace " + ns);
  const std::string uid = Field(*pod.value, "metadata", "uid");
  std::lock_guard<std::mutex> lock(sync_mu_);
  auto it = workers_.find(uid);
  if (it == workers_.end() || it->second->finished()) {
    return FailedPrecondition("pod " + ns + "/" + name + " is not running on this kubelet");
  }
  it->second->Evict(message);
  return Status::Ok();
}

}  // namespace edl::fakekube
