// PodProcess: starts a container's command as a local child process the way
// the fake kubelet needs it: its own process group (so signals reach the
// whole tree), killed with the fake (PR_SET_PDEATHSIG), stdout and stderr on
// one pipe, the container's environment only, and volume mounts made
// visible in a private mount namespace (unshare(CLONE_NEWNS), / made
// rprivate, bind mounts, read-only remounts). Everything the child does
// between fork and exec is async-signal-safe: it was prepared before the
// fork.
//
// Also: the resident memory of a process tree (for OOM kills).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "tests/fakekube/server/pod_volumes.h"

namespace edl::fakekube {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is searched in env's PATH if it has no '/'
  std::vector<std::pair<std::string, std::string>> env;
  std::string working_dir = "/";
  std::vector<BindMount> mounts;  // none: no mount namespace is made
};

struct ChildProcess {
  pid_t pid = -1;      // also the process group id
  int output_fd = -1;  // read end of the stdout+stderr pipe; caller closes
};

// Outcomes other than a running child:
//  * FailedPrecondition: the container could not be set up (unshare, mount,
//    working directory): the kubelet's CreateContainerConfigError;
//  * Unavailable: exec failed (`exec: "x": executable file not found in
//    $PATH`): the runtime's StartError;
//  * Internal: pipe/fork failed in the parent.
Result<ChildProcess> StartPodProcess(const ProcessSpec& spec);

// VmRSS of `pid` and all its descendants, in bytes (0 if it is gone).
int64_t ProcessTreeRssBytes(pid_t pid);

}  // namespace edl::fakekube
