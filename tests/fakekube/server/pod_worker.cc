// PodWorker: one pod's container lifecycle.
#include "tests/fakekube/server/pod_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/logging.h"
#include "tests/fakekube/server/container_env.h"
#include "tests/fakekube/server/pod_conditions.h"
#include "tests/fakekube/server/resource_list.h"

namespace edl::fakekube {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr char kServiceAccountPath[] = "/var/run/secrets/kubernetes.io/serviceaccount";

std::string MetaField(const Json& pod, const char* field) {
  return pod["metadata"].value(field, std::string());
}

const Json& FirstContainer(const Json& pod) { return pod["spec"]["containers"][0]; }

}  // namespace

PodWorker::PodWorker(Store& store, const KubeletOptions& options, Json pod, std::string pod_ip,
                     std::string pod_dir)
    : store_(store),
      options_(options),
      pod_(std::move(pod)),
      ns_(MetaField(pod_, "namespace")),
      name_(MetaField(pod_, "name")),
      uid_(MetaField(pod_, "uid")),
      pod_ip_(std::move(pod_ip)),
      pod_dir_(std::move(pod_dir)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  EDL_CHECK(wake_fd_ >= 0) << "eventfd failed";
  if (!options_.log_dir.empty()) {
    log_file_.open(options_.log_dir + "/" + ns_ + "_" + name_ + "_" + uid_ + ".log",
                   std::ios::app | std::ios::binary);
  }
}

PodWorker::~PodWorker() {
  Kill();
  if (thread_.joinable()) thread_.join();
  close(wake_fd_);
}

void PodWorker::Start() {
  thread_ = std::thread([this] {
    Run();
    finished_ = true;
  });
}

void PodWorker::Terminate(double grace_seconds) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto deadline =
        Clock::now() + milliseconds(static_cast<int64_t>(std::max(0.0, grace_seconds) * 1000));
    if (!term_deadline_ || deadline < *term_deadline_) term_deadline_ = deadline;
  }
  cv_.notify_all();
  WakeSupervisor();
}

void PodWorker::Evict(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!evict_message_) evict_message_ = message;
  }
  cv_.notify_all();
  WakeSupervisor();
}

void PodWorker::Kill() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    kill_ = true;
  }
  cv_.notify_all();
  WakeSupervisor();
}

void PodWorker::Notify() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    notified_ = true;
  }
  cv_.notify_all();
}

void PodWorker::WakeSupervisor() {
  uint64_t one = 1;
  ssize_t ignored = write(wake_fd_, &one, sizeof(one));
  (void)ignored;
}

bool PodWorker::StopRequested() {
  std::lock_guard<std::mutex> lock(mu_);
  return kill_ || evict_message_ || term_deadline_;
}

PodWorker::Wait PodWorker::WaitFor(milliseconds timeout, bool wake_on_notify) {
  std::unique_lock<std::mutex> lock(mu_);
  auto stop = [this] { return kill_ || evict_message_.has_value() || term_deadline_.has_value(); };
  bool woke = cv_.wait_for(lock, timeout, [&] { return stop() || (wake_on_notify && notified_); });
  if (stop()) return Wait::kStop;
  notified_ = false;
  return woke ? Wait::kChanged : Wait::kTimeout;
}

void PodWorker::Run() {
  start_time_ = NowRfc3339();
  WriteWaiting("ContainerCreating", "");
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (kill_) return;
      if (evict_message_ || term_deadline_) {
        Outcome outcome;
        outcome.evicted = evict_message_.has_value();
        outcome.terminated = !outcome.evicted;
        lock.unlock();
        Finish(outcome, outcome.terminated);
        return;
      }
    }
    std::optional<Outcome> start_error;
    std::optional<ChildProcess> child = StartContainer(&start_error);
    Outcome outcome;
    if (child) {
      std::string started_at = NowRfc3339();
      WriteRunning(started_at);
      outcome = Supervise(*child, started_at);
    } else if (start_error) {
      outcome = *start_error;
    } else {
      WaitFor(milliseconds(10000), /*wake_on_notify=*/true);  // then retry or stop
      continue;
    }
    if (outcome.killed) return;
    if (outcome.evicted || outcome.terminated) {
      Finish(outcome, outcome.terminated);
      return;
    }
    std::string policy = pod_["spec"].value("restartPolicy", std::string("Always"));
    if (policy == "Never" || (policy == "OnFailure" && outcome.exit_code == 0)) {
      Finish(outcome, false);
      return;
    }
    last_state_ = {{"terminated",
                    {{"exitCode", outcome.exit_code},
                     {"reason", outcome.reason},
                     {"startedAt", outcome.started_at},
                     {"finishedAt", outcome.finished_at},
                     {"containerID", "fake://" + uid_ + "/" + std::to_string(restart_count_)}}}};
    ++restart_count_;
    milliseconds backoff = options_.restart_backoff * (1 << std::min(restart_count_ - 1, 10));
    backoff = std::min(backoff, milliseconds(10000));
    WriteWaiting(
        "CrashLoopBackOff",
        "back-off " +
            (backoff.count() % 1000 == 0 ? std::to_string(backoff.count() / 1000) + "s"
                                         : std::to_string(backoff.count()) + "ms") +
            " restarting failed container=" + FirstContainer(pod_).value("name", std::string()) +
            " pod=" + name_ + "_" + ns_ + "(" + uid_ + ")");
    WaitFor(backoff, /*wake_on_notify=*/false);
  }
}

std::optional<ChildProcess> PodWorker::StartContainer(std::optional<Outcome>* start_error) {
  const Json& container = FirstContainer(pod_);
  const std::string image = container.value("image", std::string());
  auto found = options_.images.find(image);
  if (found == options_.images.end()) {
    size_t slash = image.rfind('/');
    size_t colon = image.rfind(':');
    if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
      found = options_.images.find(image.substr(0, colon));
    }
  }
  if (found == options_.images.end()) {
    WriteWaiting("ErrImagePull", "failed to pull and unpack image \"" + image +
                                     "\": not in the fake kubelet's image table "
                                     "(edl-fake-kube --image NAME=DIR)");
    return std::nullopt;
  }
  Result<std::vector<BindMount>> mounts =
      PrepareVolumes(store_, pod_, container, pod_dir_, options_.service_account);
  if (!mounts.ok()) {
    bool retry = mounts.status().code() == StatusCode::kFailedPrecondition;
    WriteWaiting(retry ? "ContainerCreating" : "CreateContainerConfigError",
                 mounts.status().message());
    return std::nullopt;
  }
  bool automount = pod_["spec"].value("automountServiceAccountToken", true);
  bool mounted_already = false;
  for (const BindMount& m : *mounts) mounted_already |= m.target == kServiceAccountPath;
  const std::string token = options_.service_account.TokenFor(pod_);
  if (automount && !mounted_already && !token.empty()) {
    namespace fs = std::filesystem;
    fs::path dir = fs::path(pod_dir_) / "serviceaccount";
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::ofstream(dir / "token", std::ios::trunc) << token;
    std::ofstream(dir / "ca.crt", std::ios::trunc) << options_.service_account.ca_crt;
    std::ofstream(dir / "namespace", std::ios::trunc) << ns_;
    mounts->push_back(BindMount{dir.string(), kServiceAccountPath, true});
  }
  EnvList base = {
      {"PATH", found->second + ":" + kDefaultPath}, {"HOSTNAME", name_}, {"HOME", "/root"}};
  if (!options_.api_host.empty()) {
    std::string port = std::to_string(options_.api_port);
    base.emplace_back("KUBERNETES_SERVICE_HOST", options_.api_host);
    base.emplace_back("KUBERNETES_SERVICE_PORT", port);
    base.emplace_back("KUBERNETES_SERVICE_PORT_HTTPS", port);
    base.emplace_back("KUBERNETES_PORT", "tcp://" + options_.api_host + ":" + port);
  }
  Result<EnvList> env =
      ContainerEnv(store_, pod_, container, PodPlacement{pod_ip_, options_.host_ip}, base);
  if (!env.ok()) {
    WriteWaiting("CreateContainerConfigError", env.status().message());
    return std::nullopt;
  }
  ProcessSpec spec;
  spec.argv = ContainerArgv(container, *env);
  spec.env = std::move(env).value();
  spec.working_dir = container.value("workingDir", pod_dir_);
  spec.mounts = std::move(mounts).value();
  Result<ChildProcess> child = StartPodProcess(spec);
  if (child.ok()) {
    EDL_LOG(INFO) << "kubelet: started " << ns_ << "/" << name_ << " as pid " << child->pid
                  << " on " << pod_ip_;
    return *child;
  }
  const Status& status = child.status();
  if (status.code() == StatusCode::kUnavailable) {
    Outcome outcome;
    outcome.exit_code = 128;
    outcome.reason = "StartError";
    outcome.message = status.message();
    outcome.started_at = outcome.finished_at = NowRfc3339();
    *start_error = outcome;
    return std::nullopt;
  }
  EDL_LOG(WARNING) << "kubelet: " << ns_ << "/" << name_ << ": " << status.message();
  WriteWaiting(status.code() == StatusCode::kFailedPrecondition ? "CreateContainerConfigError"
                                                                : "ContainerCreating",
               status.message());
  return std::nullopt;
}

PodWorker::Outcome PodWorker::Supervise(const ChildProcess& child, const std::string& started_at) {
  const pid_t pid = child.pid;
  const int fd = child.output_fd;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const int64_t limit = MemoryLimitBytes(FirstContainer(pod_));
  Outcome outcome;
  outcome.started_at = started_at;
  bool fd_open = true;
  bool oom = false, term_sent = false, kill_sent = false;
  int wstatus = 0;
  auto next_memory_check = Clock::now();
  char buffer[65536];
  auto drain = [&] {
    for (;;) {
      ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n > 0) {
        AppendOutput(std::string(buffer, n), false);
        continue;
      }
      if (n == 0) fd_open = false;
      if (n < 0 && errno == EINTR) continue;
      return;
    }
  };
  for (;;) {
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fd, POLLIN, 0}};
    poll(fds, fd_open ? 2 : 1, 100);
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      ssize_t ignored = read(wake_fd_, &count, sizeof(count));
      (void)ignored;
    }
    if (fd_open && fds[1].revents) drain();
    if (waitpid(pid, &wstatus, WNOHANG) == pid) break;
    const auto now = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (kill_ && !outcome.killed) {
        outcome.killed = true;
        kill(-pid, SIGKILL);
      }
      if (evict_message_ && !outcome.evicted && !outcome.killed) {
        outcome.evicted = true;
        kill(-pid, SIGKILL);
      }
      if (term_deadline_ && !outcome.evicted && !outcome.killed) {
        outcome.terminated = true;
        if (!term_sent) {
          term_sent = true;
          kill(-pid, SIGTERM);
          EDL_LOG(INFO) << "kubelet: SIGTERM to " << ns_ << "/" << name_;
        }
        if (now >= *term_deadline_ && !kill_sent) {
          kill_sent = true;
          kill(-pid, SIGKILL);
          EDL_LOG(INFO) << "kubelet: grace period of " << ns_ << "/" << name_
                        << " is over: SIGKILL";
        }
      }
    }
    if (limit > 0 && !oom && now >= next_memory_check) {
      next_memory_check = now + options_.memory_poll_interval;
      int64_t rss = ProcessTreeRssBytes(pid);
      if (rss > limit) {
        oom = true;
        kill(-pid, SIGKILL);
        EDL_LOG(INFO) << "kubelet: " << ns_ << "/" << name_ << " uses " << rss
                      << " bytes, over its memory limit of " << limit << ": OOMKilled";
      }
    }
  }
  kill(-pid, SIGKILL);  // what is left of the process group
  const auto drain_deadline = Clock::now() + milliseconds(1000);
  while (fd_open && Clock::now() < drain_deadline) {
    pollfd pfd{fd, POLLIN, 0};
    poll(&pfd, 1, 100);
    if (pfd.revents) drain();
  }
  close(fd);
  AppendOutput("", true);
  outcome.finished_at = NowRfc3339();
  outcome.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  if (oom) {
    outcome.exit_code = 137;
    outcome.reason = "OOMKilled";
  } else {
    outcome.reason = outcome.exit_code == 0 ? "Completed" : "Error";
  }
  EDL_LOG(INFO) << "kubelet: " << ns_ << "/" << name_ << " exited with " << outcome.exit_code
                << " (" << outcome.reason << ")";
  return outcome;
}

void PodWorker::AppendOutput(const std::string& bytes, bool flush) {
  partial_line_ += bytes;
  size_t start = 0;
  for (size_t nl; (nl = partial_line_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = partial_line_.substr(start, nl + 1 - start);
    store_.AppendLog(uid_, line);
    if (log_file_.is_open()) log_file_ << line << std::flush;
  }
  partial_line_.erase(0, start);
  if (flush && !partial_line_.empty()) {
    store_.AppendLog(uid_, partial_line_);
    if (log_file_.is_open()) log_file_ << partial_line_ << std::flush;
    partial_line_.clear();
  }
}

Json PodWorker::ContainerStatus(Json state, bool ready) const {
  const Json& container = FirstContainer(pod_);
  std::string image = container.value("image", std::string());
  Json status = {{"name", container.value("name", std::string())},
                 {"image", image},
                 {"imageID", "fake://" + image},
                 {"ready", ready},
                 {"started", ready},
                 {"restartCount", restart_count_},
                 {"state", std::move(state)},
                 {"lastState", last_state_}};
  if (ready) status["containerID"] = "fake://" + uid_ + "/" + std::to_string(restart_count_);
  return status;
}

void PodWorker::WriteStatus(const std::function<void(Json&)>& mutate) {
  auto with_placement = [&](Json& pod) {
    Json& status = pod["status"];
    status["hostIP"] = options_.host_ip;
    status["hostIPs"] = Json::array({{{"ip", options_.host_ip}}});
    status["podIP"] = pod_ip_;
    status["podIPs"] = Json::array({{{"ip", pod_ip_}}});
    if (!status.contains("startTime")) status["startTime"] = start_time_;
    mutate(pod);
  };
  ApiResult<Json> current = store_.Get("pods", ns_, name_);
  if (!current.ok() || MetaField(*current.value, "uid") != uid_) return;
  Json changed = *current.value;
  with_placement(changed);
  if (changed == *current.value) return;
  ApiResult<Json> updated = store_.Update("pods", ns_, name_, [&](Json& pod) {
    if (MetaField(pod, "uid") == uid_) with_placement(pod);
  });
  if (!updated.ok()) {
    EDL_LOG(DEBUG) << "kubelet: status of " << ns_ << "/" << name_ << ": " << updated.error.message;
  }
}

void PodWorker::WriteWaiting(const std::string& reason, const std::string& message) {
  Json waiting = {{"reason", reason}};
  if (!message.empty()) waiting["message"] = message;
  const std::string unready =
      "containers with unready status: [" + FirstContainer(pod_).value("name", std::string()) + "]";
  const bool restarting = restart_count_ > 0;
  Json status = ContainerStatus({{"waiting", waiting}}, false);
  WriteStatus([&](Json& pod) {
    pod["status"]["phase"] = restarting ? "Running" : "Pending";
    SetPodCondition(pod, "PodReadyToStartContainers", "True");
    SetPodCondition(pod, "Initialized", "True");
    SetPodCondition(pod, "Ready", "False", "ContainersNotReady", unready);
    SetPodCondition(pod, "ContainersReady", "False", "ContainersNotReady", unready);
    pod["status"]["containerStatuses"] = Json::array({status});
  });
}

void PodWorker::WriteRunning(const std::string& started_at) {
  Json status = ContainerStatus({{"running", {{"startedAt", started_at}}}}, true);
  WriteStatus([&](Json& pod) {
    pod["status"]["phase"] = "Running";
    SetPodCondition(pod, "PodReadyToStartContainers", "True");
    SetPodCondition(pod, "Initialized", "True");
    SetPodCondition(pod, "Ready", "True");
    SetPodCondition(pod, "ContainersReady", "True");
    SetPodCondition(pod, "PodScheduled", "True");
    pod["status"]["containerStatuses"] = Json::array({status});
  });
}

void PodWorker::Finish(const Outcome& outcome, bool remove) {
  std::string evict_message;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (evict_message_) evict_message = *evict_message_;
  }
  const bool succeeded = !outcome.reason.empty() && outcome.exit_code == 0 && !outcome.evicted;
  Json terminated;
  if (!outcome.reason.empty()) {
    terminated = {{"exitCode", outcome.exit_code},
                  {"reason", outcome.reason},
                  {"startedAt", outcome.started_at},
                  {"finishedAt", outcome.finished_at},
                  {"containerID", "fake://" + uid_ + "/" + std::to_string(restart_count_)}};
    if (!outcome.message.empty()) terminated["message"] = outcome.message;
    if (outcome.exit_code > 128 && outcome.reason != "StartError") {
      terminated["signal"] = outcome.exit_code - 128;
    }
  }
  Json container_status = ContainerStatus({{"terminated", terminated}}, false);
  if (!terminated.is_null()) container_status["containerID"] = terminated["containerID"];
  WriteStatus([&](Json& pod) {
    Json& status = pod["status"];
    status["phase"] = succeeded ? "Succeeded" : "Failed";
    SetPodCondition(pod, "PodReadyToStartContainers", "False");
    SetPodCondition(pod, "Ready", "False", "PodCompleted");
    SetPodCondition(pod, "ContainersReady", "False", "PodCompleted");
    if (!terminated.is_null()) status["containerStatuses"] = Json::array({container_status});
    if (outcome.evicted) {
      status["reason"] = "Evicted";
      status["message"] = evict_message;
      SetPodCondition(pod, "DisruptionTarget", "True", "TerminationByKubelet", evict_message);
    }
  });
  if (!remove) return;
  ApiResult<Json> current = store_.Get("pods", ns_, name_);
  if (current.ok() && MetaField(*current.value, "uid") == uid_) {
    ApiResult<Json> removed = store_.Remove("pods", ns_, name_);
    if (removed.ok()) EDL_LOG(INFO) << "kubelet: removed " << ns_ << "/" << name_;
  }
}

}  // namespace edl::fakekube
