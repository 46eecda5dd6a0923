#include "roles/cluster/local_cluster.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "base/check.h"
#include "base/logging.h"
#include "roles/cluster/line_splitter.h"
#include "roles/cluster/spawn.h"

namespace edl::roles::cluster {

struct LocalCluster::Child {
  Child(std::string n, pid_t p, int out, int pfd, LineSplitter::Emit emit)
      : name(std::move(n)),
        pid(p),
        output_fd(out),
        pidfd(pfd),
        lines("[" + name + "] ", std::move(emit)) {}
  std::string name;
  pid_t pid;
  int output_fd;  // -1 once the pipe reached end of stream
  int pidfd;      // -1 once reaped, or where pidfd_open is unsupported
  bool reaped = false;
  LineSplitter lines;
};

struct LocalCluster::LaunchRequest {
  const ProcessSpec* spec;
  bool done = false;
  Status status;
};

namespace {

// Through the logger, so a progress bar the master draws stays below.
void WriteLineToStderr(const std::string& line) { WriteStderrLines(line + "\n"); }

int OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
#else
  return -1;
#endif
}

// Signals the child's process group, or the child alone if it has none yet.
int SignalGroup(pid_t pid, int sig) {
  if (kill(-pid, sig) == 0) return 0;
  if (kill(pid, sig) == 0) return 0;
  return errno;
}

}  // namespace

LocalCluster::LocalCluster(std::string binary, LineSink sink,
                           std::chrono::milliseconds grace_period)
    : binary_(std::move(binary)),
      sink_(sink ? std::move(sink) : LineSink(WriteLineToStderr)),
      grace_period_(grace_period) {
  int fds[2];
  EDL_CHECK(pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) << ErrnoMessage(errno);
  wake_read_ = fds[0];
  wake_write_ = fds[1];
  thread_ = std::thread([this] { EventLoop(); });
}

LocalCluster::~LocalCluster() {
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  for (const auto& [name, proc] : running_) SignalGroup(proc.pid, SIGTERM);
  if (!cv_.wait_for(lock, grace_period_, [&] { return running_.empty(); })) {
    for (const auto& [name, proc] : running_) {
      EDL_LOG(WARNING) << name << " did not exit within " << grace_period_.count()
                       << " ms of SIGTERM; sending SIGKILL";
      SignalGroup(proc.pid, SIGKILL);
    }
    cv_.wait(lock, [&] { return running_.empty(); });
  }
  quit_ = true;
  lock.unlock();
  Wake();
  thread_.join();
  for (auto& child : children_) {
    if (child->output_fd >= 0) close(child->output_fd);
    if (child->pidfd >= 0) close(child->pidfd);
  }
  close(wake_read_);
  close(wake_write_);
}

Status LocalCluster::Launch(const ProcessSpec& spec) {
  if (spec.name.empty()) return InvalidArgument("a process needs a name");
  LaunchRequest request{&spec, false, Status::Ok()};
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return FailedPrecondition("the cluster is shutting down");
  if (running_.count(spec.name) || launching_.count(spec.name)) {
    return Status(StatusCode::kAlreadyExists, spec.name + " is already running");
  }
  launching_.insert(spec.name);
  requests_.push_back(&request);
  lock.unlock();
  Wake();
  lock.lock();
  cv_.wait(lock, [&] { return request.done; });
  return request.status;
}

Status LocalCluster::Signal(const std::string& name, int signal) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = running_.find(name);
  if (it == running_.end()) return NotFound(name + " is not running");
  int err = SignalGroup(it->second.pid, signal);
  if (err != 0) {
    return Internal("cannot send signal " + std::to_string(signal) + " to " + name + ": " +
                    ErrnoMessage(err));
  }
  return Status::Ok();
}

std::optional<ProcessExit> LocalCluster::WaitExit(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !exits_.empty(); })) {
    return std::nullopt;
  }
  ProcessExit exit = std::move(exits_.front());
  exits_.pop_front();
  return exit;
}

std::vector<std::string> LocalCluster::Running() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, proc] : running_) names.push_back(name);
  return names;
}

std::optional<pid_t> LocalCluster::Pid(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = running_.find(name);
  if (it == running_.end()) return std::nullopt;
  return it->second.pid;
}

void LocalCluster::Wake() {
  char byte = 1;
  ssize_t ignored = write(wake_write_, &byte, 1);  // full pipe: already awake
  (void)ignored;
}

void LocalCluster::EventLoop() {
  // What each pollfd belongs to: -1 the wake pipe, else an index into
  // children_ (its output pipe or its pidfd).
  std::vector<pollfd> fds;
  std::vector<int> owner;
  for (;;) {
    fds.clear();
    owner.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    owner.push_back(-1);
    bool poll_for_exits = false;  // a child without a pidfd: waitpid by timer
    for (size_t i = 0; i < children_.size(); ++i) {
      Child& c = *children_[i];
      if (c.output_fd >= 0) {
        fds.push_back({c.output_fd, POLLIN, 0});
        owner.push_back(static_cast<int>(i));
      }
      if (c.reaped) continue;
      if (c.pidfd >= 0) {
        fds.push_back({c.pidfd, POLLIN, 0});
        owner.push_back(static_cast<int>(i));
      } else {
        poll_for_exits = true;
      }
    }
    int n = poll(fds.data(), fds.size(), poll_for_exits ? 50 : -1);
    EDL_CHECK(n >= 0 || errno == EINTR) << "poll: " << ErrnoMessage(errno);
    if (fds[0].revents != 0) {
      char buf[256];
      while (read(wake_read_, buf, sizeof buf) > 0) {
      }
    }
    for (size_t k = 1; k < fds.size(); ++k) {
      Child& c = *children_[owner[k]];
      if (fds[k].revents != 0 && fds[k].fd == c.output_fd) ReadOutput(c);
    }
    ReapExited();
    StartRequested();
    std::erase_if(children_,
                  [](const std::unique_ptr<Child>& c) { return c->reaped && c->output_fd < 0; });
    std::lock_guard<std::mutex> lock(mu_);
    if (quit_) return;
  }
}

void LocalCluster::ReadOutput(Child& child) {
  char buf[16384];
  while (child.output_fd >= 0) {
    ssize_t n = read(child.output_fd, buf, sizeof buf);
    if (n > 0) {
      child.lines.Append(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    child.lines.Flush();  // end of stream (or an error, treated alike)
    close(child.output_fd);
    child.output_fd = -1;
  }
}

void LocalCluster::ReapExited() {
  for (auto& c : children_) {
    if (c->reaped) continue;
    std::unique_lock<std::mutex> lock(mu_);
    int status = 0;
    pid_t r;
    do {
      r = waitpid(c->pid, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) continue;
    ProcessExit exit;
    exit.name = c->name;
    exit.incarnation = running_.at(c->name).incarnation;
    if (r < 0) {  // ECHILD: someone else reaped it
      EDL_LOG(ERROR) << c->name << " (pid " << c->pid
                     << ") was reaped elsewhere; its exit status is lost";
      exit.code = 255;
    } else if (WIFSIGNALED(status)) {
      exit.signaled = true;
      exit.code = WTERMSIG(status);
    } else {
      exit.code = WEXITSTATUS(status);
    }
    running_.erase(c->name);
    lock.unlock();
    c->reaped = true;
    if (c->pidfd >= 0) close(c->pidfd);
    c->pidfd = -1;
    // Everything the child wrote is in the pipe now: forward it before the
    // exit is reported. (Its own children may keep the pipe open; the rest
    // follows as they write.)
    ReadOutput(*c);
    lock.lock();
    exits_.push_back(std::move(exit));
    cv_.notify_all();
  }
}

void LocalCluster::StartRequested() {
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    if (requests_.empty()) return;
    LaunchRequest* request = requests_.front();
    requests_.pop_front();
    lock.unlock();
    const ProcessSpec& spec = *request->spec;
    Result<SpawnedChild> spawned = SpawnChild(binary_, spec.args, spec.env);
    lock.lock();
    launching_.erase(spec.name);
    if (!spawned.ok()) {
      request->status = spawned.status().WithPrefix("launching " + spec.name);
    } else {
      int64_t incarnation = ++incarnations_[spec.name];
      running_[spec.name] = Proc{spawned->pid, incarnation};
      children_.push_back(std::make_unique<Child>(spec.name, spawned->pid, spawned->output_fd,
                                                  OpenPidfd(spawned->pid), sink_));
      if (stopping_) SignalGroup(spawned->pid, SIGTERM);
      request->status = Status::Ok();
    }
    request->done = true;
    cv_.notify_all();
  }
}

}  // namespace edl::roles::cluster
