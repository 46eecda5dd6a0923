#include "roles/job/job_host.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "base/logging.h"
#include "base/signal_watcher.h"
#include "roles/cluster/hosted_cluster.h"
#include "roles/cluster/local_cluster.h"
#include "roles/cluster/spawn.h"
#include "roles/job/job_secret.h"
#include "roles/job/master_cluster.h"
#include "roles/job/master_process.h"
#include "roles/job_dir.h"

namespace edl::roles::job {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Starts the master with this process's stdin, stdout and stderr, killed by
// the kernel if this thread dies.
Result<pid_t> StartMaster(const std::string& binary, const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return Unavailable("cannot start the master: " + cluster::ErrnoMessage(errno));
  if (pid == 0) {
    // Only async-signal-safe calls here.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// The master's connection: authenticated by its first line.
struct Connection {
  int fd = -1;
  std::string buffer;
  bool authenticated = false;

  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    buffer.clear();
    authenticated = false;
  }
};

std::string ErrorText(const Status& s) {
  if (s.ok()) return "";
  if (s.code() == StatusCode::kAlreadyExists) return "AlreadyExists: " + s.message();
  if (s.code() == StatusCode::kNotFound) return "NotFound: " + s.message();
  return s.message();
}

// One request of the master; the answer line.
std::string Handle(const json& m, cluster::LocalCluster& processes) {
  const int64_t id = m.value("id", int64_t{0});
  Status s;
  if (m.contains("launch") && m["launch"].is_object()) {
    const json& l = m["launch"];
    cluster::ProcessSpec spec;
    spec.name = l.value("name", std::string());
    spec.args = l.value("args", std::vector<std::string>{});
    spec.env = l.value("env", std::map<std::string, std::string>{});
    s = processes.Launch(spec);
  } else if (m.contains("signal") && m["signal"].is_object()) {
    const json& g = m["signal"];
    s = processes.Signal(g.value("name", std::string()), g.value("signal", SIGTERM));
  } else {
    s = InvalidArgument("job host: unknown request " + m.dump());
  }
  return json{{"id", id}, {"error", ErrorText(s)}}.dump();
}

// Reads what the master sent and answers every whole line; false when the
// connection is gone.
bool Serve(Connection& c, const std::string& secret, cluster::LocalCluster& processes) {
  char chunk[65536];
  const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return false;
  if (n > 0) c.buffer.append(chunk, static_cast<size_t>(n));
  size_t nl;
  while ((nl = c.buffer.find('\n')) != std::string::npos) {
    const std::string line = c.buffer.substr(0, nl);
    c.buffer.erase(0, nl + 1);
    const json m = json::parse(line, nullptr, false);
    if (!c.authenticated) {
      if (!m.is_object() || m.value("secret", std::string()) != secret) {
        EDL_LOG(WARNING) << "job host: a connection without the job's secret; closed";
        return false;
      }
      c.authenticated = true;
      if (!cluster::WriteLine(c.fd, json{{"running", processes.Running()}}.dump())) return false;
      continue;
    }
    if (!m.is_object() || !cluster::WriteLine(c.fd, Handle(m, processes))) return false;
  }
  return true;
}

}  // namespace

int RunJobHost(MasterProcessOptions m) {
  std::atomic<bool> stopping{false};
  std::atomic<pid_t> master_pid{-1};
  SignalWatcher signals([&](int signo) {
    stopping = true;
    const pid_t pid = master_pid.load();
    if (pid > 0) ::kill(pid, SIGTERM);  // the master stops the job
    EDL_LOG(INFO) << "job host: " << (signo == SIGINT ? "SIGINT" : "SIGTERM")
                  << "; the master stops the job";
  });
  auto fail = [](const Status& s) {
    EDL_LOG(ERROR) << s.message();
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  };
  Result<std::string> secret = LoadSecret(m.job);
  if (!secret.ok()) return fail(secret.status());
  // The job's outcome for `edl wait`, recorded however this function
  // returns (a failure to start is exit code 1). A job directory reused by
  // a new job holds no old outcome.
  struct OutcomeRecorder {
    JobDirectory dir;
    int exit_code = 1;
    ~OutcomeRecorder() {
      if (dir.path.empty()) return;
      const json outcome{{"exit_code", exit_code},
                         {"ended_unix_s", static_cast<double>(::time(nullptr))}};
      Status s = WriteFileAtomically(dir.OutcomePath(), outcome.dump() + "\n");
      if (!s.ok()) EDL_LOG(WARNING) << "job host: cannot record the outcome: " << s.message();
    }
  } outcome{JobDirectory{m.job.job_dir}};
  if (!m.job.job_dir.empty()) std::remove(outcome.dir.OutcomePath().c_str());
  // The master listens on the same port whichever master it is, so the
  // workers find the next one where they found the last.
  if (m.port == 0) {
    Result<int> port = PickFreePort(m.host);
    if (!port.ok()) return fail(port.status());
    m.port = *port;
  }
  m.host_socket = "@edl-host-" + m.job.job_name + "-" + std::to_string(::getpid());
  Result<int> listener = cluster::ListenUnix(m.host_socket);
  if (!listener.ok()) return fail(listener.status());
  cluster::LocalCluster processes(m.binary, nullptr, m.grace_period);
  const std::vector<std::string> args = ToArgs(m);

  int restarts = 0;
  Result<pid_t> started = StartMaster(m.binary, args);
  if (!started.ok()) return fail(started.status());
  master_pid = *started;
  // The master's connection, and one that has not yet authenticated (it
  // replaces the master's only once it has: a stranger cannot cut it off).
  Connection conn, pending;
  int exit_code = 1;
  while (true) {
    pollfd fds[3] = {{*listener, POLLIN, 0}, {conn.fd, POLLIN, 0}, {pending.fd, POLLIN, 0}};
    ::poll(fds, 3, 20);
    if (fds[0].revents & POLLIN) {
      const int fd = ::accept4(*listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        pending.Close();
        pending.fd = fd;
      }
    }
    if (conn.fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
        !Serve(conn, *secret, processes)) {
      conn.Close();
    }
    if (pending.fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      if (!Serve(pending, *secret, processes)) {
        pending.Close();
      } else if (pending.authenticated) {
        conn.Close();  // a new master replaces the last one's connection
        conn = pending;
        pending = Connection();
      }
    }
    // Exits go to the master; one without a master is in the running list
    // the next master gets.
    while (std::optional<cluster::ProcessExit> e = processes.WaitExit(milliseconds(0))) {
      if (conn.fd < 0 || !conn.authenticated) continue;
      const json line{{"exit",
                       {{"name", e->name},
                        {"incarnation", e->incarnation},
                        {"signaled", e->signaled},
                        {"code", e->code}}}};
      if (!cluster::WriteLine(conn.fd, line.dump())) conn.Close();
    }
    int status = 0;
    if (::waitpid(master_pid.load(), &status, WNOHANG) != master_pid.load()) continue;
    conn.Close();
    const bool lost_state = WIFEXITED(status) && WEXITSTATUS(status) == kMasterLeavesExitCode;
    if (WIFEXITED(status) && !lost_state) {
      exit_code = WEXITSTATUS(status);  // the master ended the job
      break;
    }
    const std::string how = lost_state ? "left the job to a new master"
                                       : "was killed by signal " + std::to_string(WTERMSIG(status));
    if (stopping) {
      EDL_LOG(ERROR) << "job host: the master " << how << " while stopping the job";
      break;
    }
    if (++restarts > kMaxMasterRestarts) {
      EDL_LOG(ERROR) << "job host: the master " << how << "; it was replaced " << (restarts - 1)
                     << " times already: giving up (see its log above)";
      break;
    }
    EDL_LOG(WARNING) << "job host: the master (pid " << master_pid.load() << ") " << how
                     << "; starting a new one (restart " << restarts << " of " << kMaxMasterRestarts
                     << "), the workers and PS go on";
    started = StartMaster(m.binary, args);
    if (!started.ok()) return fail(started.status());
    master_pid = *started;
    // A SIGINT/SIGTERM that came meanwhile went to the dead master.
    if (stopping) ::kill(master_pid.load(), SIGTERM);
  }
  master_pid = -1;
  ::close(*listener);
  outcome.exit_code = exit_code;
  return exit_code;  // `processes` stops whatever is left
}

}  // namespace edl::roles::job
