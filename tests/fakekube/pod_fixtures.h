// Test helpers for the fake cluster's scheduler, kubelet and kube-proxy
// tests: pod builders, waiting for a condition with a deadline, and a
// recorder of the watch events a Store subscriber sees.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube::testing {

// A pod with one container "main" (image "shell") running `command`,
// restartPolicy Never, terminationGracePeriodSeconds 10.
inline Json ShellPod(const std::string& name, const std::vector<std::string>& command) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"terminationGracePeriodSeconds", 10},
            {"containers", {{{"name", "main"}, {"image", "shell"}, {"command", command}}}}}}};
}

// A pod that only asks for resources (for the scheduler).
inline Json ResourcePod(const std::string& name, const std::string& cpu,
                        const std::string& priority_class = "") {
  Json pod = ShellPod(name, {"/bin/sleep", "1000"});
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", cpu}}}};
  if (!priority_class.empty()) pod["spec"]["priorityClassName"] = priority_class;
  return pod;
}

inline Json Create(Store& store, const std::string& resource, Json object) {
  ApiResult<Json> created =
      store.Create(resource, resource == "priorityclasses" ? "" : "default", std::move(object));
  if (!created.ok()) throw std::runtime_error("create failed: " + created.error.message);
  return *created.value;
}

inline Json CreatePriorityClass(Store& store, const std::string& name, int64_t value,
                                const std::string& policy = "PreemptLowerPriority") {
  return Create(store, "priorityclasses",
                {{"metadata", {{"name", name}}}, {"value", value}, {"preemptionPolicy", policy}});
}

inline Json GetPod(const Store& store, const std::string& name) {
  ApiResult<Json> pod = store.Get("pods", "default", name);
  return pod.ok() ? *pod.value : Json();
}

// Polls `condition` until it holds or `seconds` pass.
inline bool WaitUntil(const std::function<bool()>& condition, double seconds = 20) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

inline std::string PodPhaseOf(const Json& pod) {
  if (!pod.is_object() || !pod.contains("status")) return "";
  return pod["status"].value("phase", std::string());
}

// The container's terminated state, or null.
inline Json Terminated(const Json& pod) {
  if (!pod.is_object() || !pod.contains("status") || !pod["status"].contains("containerStatuses")) {
    return Json();
  }
  const Json& state = pod["status"]["containerStatuses"][0]["state"];
  return state.contains("terminated") ? state["terminated"] : Json();
}

// Records the pod events a Store subscriber sees for one pod name.
class PodEventLog {
 public:
  PodEventLog(Store& store, std::string name) : store_(store), name_(std::move(name)) {
    id_ = store_.Subscribe([this](const WatchEvent& event) {
      if (event.resource != "pods" ||
          event.object["metadata"].value("name", std::string()) != name_) {
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(event);
      if (on_event_) on_event_(event);
    });
  }
  ~PodEventLog() { store_.Unsubscribe(id_); }

  std::vector<WatchEvent> Events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  bool Saw(const std::string& type) const {
    for (const WatchEvent& e : Events()) {
      if (e.type == type) return true;
    }
    return false;
  }
  // Runs on the writer's thread, for each event, under the log's lock.
  void OnEvent(std::function<void(const WatchEvent&)> f) {
    std::lock_guard<std::mutex> lock(mu_);
    on_event_ = std::move(f);
  }

 private:
  Store& store_;
  const std::string name_;
  uint64_t id_ = 0;
  mutable std::mutex mu_;
  std::vector<WatchEvent> events_;
  std::function<void(const WatchEvent&)> on_event_;
};

}  // namespace edl::fakekube::testing
