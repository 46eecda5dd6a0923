// PodWorker: the fake kubelet's per-pod lifecycle on its own thread:
// ContainerCreating → (image, volumes, env) → start the process → Running
// → exit → terminated status, restart (Always / OnFailure) or a terminal
// phase; SIGTERM and SIGKILL at the deadline for a graceful delete, then
// the terminal status and Store::Remove; OOM kill when the process tree's
// RSS passes the memory limit; node-pressure eviction. Output goes line by
// line to Store::AppendLog. All status writes go through the Store and only
// happen when something changed. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "tests/fakekube/server/kubelet_options.h"
#include "tests/fakekube/server/pod_process.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class PodWorker {
 public:
  // `pod` is the pod as first seen; pod_dir exists.
  PodWorker(Store& store, const KubeletOptions& options, Json pod, std::string pod_ip,
            std::string pod_dir);
  ~PodWorker();  // Kill()s and joins
  PodWorker(const PodWorker&) = delete;
  PodWorker& operator=(const PodWorker&) = delete;

  void Start();
  // A graceful delete: SIGTERM to the process group now, SIGKILL after
  // grace_seconds (a later, shorter grace shortens the deadline); then the
  // terminal status and the final Store::Remove.
  void Terminate(double grace_seconds);
  // Node-pressure eviction: SIGKILL, then one write with phase Failed,
  // reason Evicted, DisruptionTarget/TerminationByKubelet. No delete.
  void Evict(const std::string& message);
  // SIGKILL and no more writes (the kubelet stops, or the pod was removed).
  void Kill();
  // Something the pod may be waiting for (a ConfigMap, a Secret) changed.
  void Notify();
  // The thread is done: the pod is terminal, removed, or killed.
  bool finished() const { return finished_.load(); }

 private:
  struct Outcome {
    int exit_code = 0;
    std::string reason;  // Completed, Error, OOMKilled, StartError
    std::string message;
    std::string started_at;
    std::string finished_at;
    bool killed = false;  // Kill(): no status
    bool evicted = false;
    bool terminated = false;  // by a delete
  };
  enum class Wait { kChanged, kTimeout, kStop };

  void Run();
  // Starts the container or says why it cannot (status written).
  std::optional<ChildProcess> StartContainer(std::optional<Outcome>* start_error);
  Outcome Supervise(const ChildProcess& child, const std::string& started_at);
  void Finish(const Outcome& outcome, bool remove);
  // Waits until a stop request, a Notify() (if wake_on_notify) or timeout.
  Wait WaitFor(std::chrono::milliseconds timeout, bool wake_on_notify);
  bool StopRequested();

  // Status writers: a read-modify-write that is skipped when the result
  // equals the stored pod.
  void WriteStatus(const std::function<void(Json&)>& mutate);
  void WriteWaiting(const std::string& reason, const std::string& message);
  void WriteRunning(const std::string& started_at);
  Json ContainerStatus(Json state, bool ready) const;
  void AppendOutput(const std::string& bytes, bool flush);
  void WakeSupervisor();

  Store& store_;
  const KubeletOptions& options_;
  const Json pod_;
  const std::string ns_, name_, uid_;
  const std::string pod_ip_;
  const std::string pod_dir_;
  int wake_fd_ = -1;  // eventfd: wakes the supervising poll

  // Worker-thread state.
  int restart_count_ = 0;
  Json last_state_ = Json::object();
  std::string partial_line_;
  std::string start_time_;
  std::ofstream log_file_;  // open when options_.log_dir is set

  std::mutex mu_;  // guards the requests below
  std::condition_variable cv_;
  bool kill_ = false;
  bool notified_ = false;
  std::optional<std::chrono::steady_clock::time_point> term_deadline_;
  std::optional<std::string> evict_message_;

  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace edl::fakekube
