// PodProcess: fork/exec with a private mount namespace.
#include "tests/fakekube/server/pod_process.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace edl::fakekube {
namespace {

// What a failed child reports on the error pipe before _exit.
struct ChildError {
  int step = 0;   // a Step
  int err = 0;    // errno
  int index = 0;  // mount index for mount steps
};

enum Step { kUnshare = 1, kMakePrivate, kMkdir, kBind, kRemount, kChdir, kExec, kDup };

// A mount as the child needs it: everything in C strings.
struct PreparedMount {
  std::string source;
  std::string target;
  std::vector<std::string> prefixes;  // directories to mkdir, outermost first
  bool file = false;                  // bind a file: the target is created as a file
  bool read_only = false;
};

std::string DescribeError(const ChildError& e, const std::vector<PreparedMount>& mounts,
                          const std::string& program) {
  std::string err = std::strerror(e.err);
  auto target = [&]() -> std::string {
    return e.index >= 0 && e.index < static_cast<int>(mounts.size())
               ? "\"" + mounts[e.index].target + "\""
               : "?";
  };
  switch (e.step) {
    case kUnshare: return "unshare(CLONE_NEWNS) for volume mounts failed: " + err;
    case kMakePrivate: return "making / rprivate in the pod's mount namespace failed: " + err;
    case kMkdir: return "creating mount point " + target() + " failed: " + err;
    case kBind:
      return "bind-mounting \"" + mounts[e.index].source + "\" at " + target() + " failed: " + err;
    case kRemount: return "remounting " + target() + " read-only failed: " + err;
    case kChdir: return "chdir to the working directory failed: " + err;
    case kDup: return "setting up stdio failed: " + err;
    case kExec:
      if (e.err == ENOENT) {
        return "exec: \"" + program + "\": executable file not found in $PATH";
      }
      return "exec: \"" + program + "\": " + err;
  }
  return "unknown child failure: " + err;
}

[[noreturn]] void Fail(int fd, int step, int index) {
  ChildError e{step, errno, index};
  ssize_t ignored = write(fd, &e, sizeof(e));
  (void)ignored;
  _exit(127);
}

// Candidate paths for argv[0]: itself if it has a '/', else each PATH entry.
std::vector<std::string> Candidates(const ProcessSpec& spec) {
  const std::string& name = spec.argv[0];
  if (name.find('/') != std::string::npos) return {name};
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const auto& [k, v] : spec.env) {
    if (k == "PATH") path = v;
  }
  std::vector<std::string> out;
  std::stringstream in(path);
  std::string dir;
  while (std::getline(in, dir, ':')) out.push_back((dir.empty() ? "." : dir) + "/" + name);
  return out;
}

}  // namespace

Result<ChildProcess> StartPodProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    return Unavailable("no command specified (the fake kubelet's images have no entrypoint)");
  }
  // Everything the child needs, prepared now.
  std::vector<std::string> candidates = Candidates(spec);
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::vector<PreparedMount> mounts;
  for (const BindMount& m : spec.mounts) {
    PreparedMount p;
    p.source = m.source;
    p.target = std::filesystem::path(m.target).lexically_normal().string();
    p.read_only = m.read_only;
    struct stat st;
    p.file = ::stat(m.source.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
    std::filesystem::path target(p.target);
    std::filesystem::path dir = p.file ? target.parent_path() : target;
    std::filesystem::path prefix;
    for (const auto& part : dir) {
      prefix /= part;
      if (prefix != "/") p.prefixes.push_back(prefix.string());
    }
    mounts.push_back(std::move(p));
  }
  const bool new_namespace = !mounts.empty();

  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Internal(std::string("pipe: ") + strerror(errno));
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return Internal(std::string("fork: ") + strerror(e));
  }
  if (pid == 0) {
    const int report = err_pipe[1];
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) {
      sigaction(sig, &dfl, nullptr);
    }
    // Nothing of the fake's (sockets, other pods' pipes) leaks into the pod.
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < 4096; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_pipe[1], 1) < 0 ||
        dup2(out_pipe[1], 2) < 0) {
      Fail(report, kDup, -1);
    }
    if (new_namespace) {
      if (unshare(CLONE_NEWNS) != 0) Fail(report, kUnshare, -1);
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        Fail(report, kMakePrivate, -1);
      }
      for (size_t i = 0; i < mounts.size(); ++i) {
        const PreparedMount& m = mounts[i];
        for (const std::string& dir : m.prefixes) {
          if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) Fail(report, kMkdir, i);
        }
        if (m.file) {
          int fd = open(m.target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
          if (fd < 0) Fail(report, kMkdir, i);
          close(fd);
        }
        if (mount(m.source.c_str(), m.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
          Fail(report, kBind, i);
        }
        if (m.read_only && mount(nullptr, m.target.c_str(), nullptr,
                                 MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
          Fail(report, kRemount, i);
        }
      }
    }
    if (chdir(spec.working_dir.c_str()) != 0) Fail(report, kChdir, -1);
    int exec_errno = ENOENT;
    for (const std::string& candidate : candidates) {
      execve(candidate.c_str(), argv.data(), envp.data());
      // Like execvp: remember a more telling error than "not found".
      if (errno != ENOENT && errno != ENOTDIR) exec_errno = errno;
    }
    errno = exec_errno;
    Fail(report, kExec, -1);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  ChildError error;
  ssize_t n;
  do {
    n = read(err_pipe[0], &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(error))) {
    close(out_pipe[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string message = DescribeError(error, mounts, spec.argv[0]);
    if (error.step == kExec) return Unavailable(message);
    return FailedPrecondition(message);
  }
  return ChildProcess{pid, out_pipe[0]};
}

int64_t ProcessTreeRssBytes(pid_t root) {
  int64_t total = 0;
  std::vector<pid_t> todo = {root};
  for (size_t i = 0; i < todo.size() && i < 4096; ++i) {
    const std::string base = "/proc/" + std::to_string(todo[i]);
    std::ifstream status(base + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmRSS:", 0) == 0) {
        total += std::atoll(line.c_str() + 6) * 1024;
        break;
      }
    }
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(base + "/task", ec)) {
      std::ifstream children(task.path() / "children");
      pid_t child;
      while (children >> child) todo.push_back(child);
    }
  }
  return total;
}

}  // namespace edl::fakekube
