#include "roles/cluster/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

extern char** environ;

namespace edl::roles::cluster {
namespace {

// Closes every fd in [lo, hi]. Async-signal-safe (used between fork and exec).
void CloseRange(unsigned lo, unsigned hi) {
  if (lo > hi) return;
#ifdef SYS_close_range
  if (syscall(SYS_close_range, lo, hi, 0) == 0) return;
#endif
  struct rlimit rl;
  unsigned max = 65536;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < max) {
    max = static_cast<unsigned>(rl.rlim_cur);
  }
  for (unsigned fd = lo; fd <= hi && fd < max; ++fd) close(static_cast<int>(fd));
}

// Writes errno to `fd` and exits; the parent reads it as the launch error.
[[noreturn]] void FailInChild(int fd) {
  int err = errno;
  ssize_t ignored = write(fd, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

// Runs in the forked child: only async-signal-safe calls from here on.
[[noreturn]] void ExecInChild(const char* path, char* const* argv, char* const* envp, pid_t parent,
                              int stdin_r, int out_w, int err_w) {
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) FailInChild(err_w);
  // The parent may have died between fork and prctl: then nobody would ever
  // send the death signal.
  if (getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  if (dup2(stdin_r, 0) < 0 || dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0) {
    FailInChild(err_w);
  }
  // err_w is close-on-exec, so it disappears on a successful exec.
  CloseRange(3, static_cast<unsigned>(err_w) - 1);
  CloseRange(static_cast<unsigned>(err_w) + 1, ~0U);
  execve(path, argv, envp);
  FailInChild(err_w);
}

void CloseIfOpen(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

std::string ErrnoMessage(int err) { return std::system_category().message(err); }

Result<SpawnedChild> SpawnChild(const std::string& binary, const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& env) {
  // Everything the child needs is built before fork: the child may not allocate.
  std::vector<std::string> argv_strings;
  argv_strings.push_back(binary);
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (env.count(key) == 0) env_strings.push_back(std::move(entry));
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> argv, envp;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  // Stdin is a pipe whose write end is closed at once: a read sees end of
  // file, as from /dev/null, which a minimal root or container may lack.
  int in[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    Status s = IoError("cannot create a pipe: " + ErrnoMessage(errno));
    for (int* fd : {&out[0], &out[1], &err[0], &err[1], &in[0], &in[1]}) CloseIfOpen(*fd);
    return s;
  }
  CloseIfOpen(in[1]);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    ExecInChild(binary.c_str(), argv.data(), envp.data(), parent, in[0], out[1], err[1]);
  }
  int fork_errno = errno;
  CloseIfOpen(in[0]);
  CloseIfOpen(out[1]);
  CloseIfOpen(err[1]);
  if (pid < 0) {
    CloseIfOpen(out[0]);
    CloseIfOpen(err[0]);
    return Unavailable("cannot fork to start " + binary + ": " + ErrnoMessage(fork_errno));
  }
  // Also set the group here, so that a signal sent right after we return
  // reaches the group even if the child has not run yet.
  setpgid(pid, pid);

  int child_errno = 0;
  ssize_t n;
  do {
    n = read(err[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  CloseIfOpen(err[0]);
  if (n > 0) {  // exec (or the set-up before it) failed; the child exits 127
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CloseIfOpen(out[0]);
    return IoError("cannot execute " + binary + ": " + ErrnoMessage(child_errno));
  }
  int flags = fcntl(out[0], F_GETFL);
  fcntl(out[0], F_SETFL, flags | O_NONBLOCK);
  SpawnedChild child;
  child.pid = pid;
  child.output_fd = out[0];
  return child;
}

}  // namespace edl::roles::cluster
