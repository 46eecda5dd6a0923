// SpawnChild: starts `binary` as a child process of the calling thread
// (fork + execve), the building block of LocalCluster.
//
// The child:
//   * gets argv = {binary, args...} and the parent's environment with `env`
//     added (an entry of `env` replaces an inherited variable of that name);
//   * reads stdin from an empty pipe (end of file at once; no /dev/null needed) and writes stdout
//   and stderr into one pipe,
//     whose non-blocking read end is returned;
//   * inherits no other file descriptor (all fds >= 3 are closed);
//   * starts with every signal unblocked and at its default disposition;
//   * leads its own process group (pgid == pid), so that signalling -pid
//     reaches whatever it spawned too;
//   * is sent SIGKILL by the kernel when the *thread* that called SpawnChild
//     exits (prctl(PR_SET_PDEATHSIG, SIGKILL), Linux), so children never
//     outlive a crashed or killed parent. Call it from a thread that lives
//     as long as the child should.
// Exec failures (missing or non-executable binary) are reported as an error
// Status; the failed child is reaped before returning.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::roles::cluster {

struct SpawnedChild {
  pid_t pid = -1;
  int output_fd = -1;  // read end of the stdout+stderr pipe; O_NONBLOCK, O_CLOEXEC
};

Result<SpawnedChild> SpawnChild(const std::string& binary, const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& env);

// "No such file or directory" for ENOENT (thread-safe strerror).
std::string ErrnoMessage(int err);

}  // namespace edl::roles::cluster
