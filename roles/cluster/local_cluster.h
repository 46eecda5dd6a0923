// LocalCluster: a Cluster whose processes are children of this process
// (docs/distributed.md), for `edl train --cluster=local` and for tests.
//
// Every process runs `binary` (the lead passes the edl executable itself,
// /proc/self/exe) with ProcessSpec::args, the inherited environment plus
// ProcessSpec::env, stdin at end of file (an empty pipe) and no other inherited fds (see
// roles/cluster/spawn.h). Its stdout and stderr go through one pipe and are
// forwarded line by line, prefixed "[<name>] ", to a sink; the default sink
// writes each line to stderr with a single write(2), so lines of different
// children never interleave mid-line.
//
// One owned thread (the event thread) forks the children, forwards their
// output and reaps them (waitpid on exactly the pids it started; pidfds wake
// it up). Because children are forked by that long-lived thread and carry
// prctl(PR_SET_PDEATHSIG, SIGKILL), they are killed by the kernel if this
// process dies, even by SIGKILL. Each child leads its own process group, and
// Signal() signals the group.
//
// The destructor sends SIGTERM to every running child, waits up to the grace
// period, sends SIGKILL to those left, reaps them all and joins the thread:
// no child or zombie outlives a LocalCluster.
//
// Thread-safe. The sink is called from the event thread only (one line at a
// time) and must not call back into the LocalCluster. Nothing else in the
// process may reap these children (waitpid(-1), SIGCHLD set to SIG_IGN).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "roles/cluster/cluster.h"

namespace edl::roles::cluster {

class LocalCluster final : public Cluster {
 public:
  using LineSink = std::function<void(const std::string& line)>;
  static constexpr std::chrono::milliseconds kDefaultGracePeriod{5000};

  // `binary`: the executable every process runs. `sink`: receives each output
  // line of each child, prefixed; null means stderr. `grace_period`: how long
  // the destructor waits after SIGTERM before SIGKILL.
  explicit LocalCluster(std::string binary, LineSink sink = nullptr,
                        std::chrono::milliseconds grace_period = kDefaultGracePeriod);
  ~LocalCluster() override;
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // InvalidArgument for an empty name, AlreadyExists if `spec.name` runs,
  // IoError if the binary cannot be executed, Unavailable if fork fails.
  Status Launch(const ProcessSpec& spec) override;
  Status Signal(const std::string& name, int signal) override;
  std::optional<ProcessExit> WaitExit(std::chrono::milliseconds timeout) override;
  std::vector<std::string> Running() const override;

  // The pid of the named running process, nullopt if none runs (for logs and
  // tests).
  std::optional<pid_t> Pid(const std::string& name) const;

 private:
  struct Child;          // event-thread state of one started child
  struct LaunchRequest;  // a Launch() waiting for the event thread
  struct Proc {
    pid_t pid;
    int64_t incarnation;
  };

  void EventLoop();
  void StartRequested();
  void ReapExited();
  // Reads what `child`'s pipe holds now; closes it at end of stream.
  void ReadOutput(Child& child);
  void Wake();

  const std::string binary_;
  const LineSink sink_;
  const std::chrono::milliseconds grace_period_;
  int wake_read_ = -1;  // self-pipe that interrupts the event thread's poll
  int wake_write_ = -1;

  mutable std::mutex mu_;
  std::condition_variable cv_;  // exits_, running_ or a request changed
  // Guarded by mu_. Reaping happens under mu_, so a pid in running_ is never
  // a reused one when Signal() uses it.
  std::map<std::string, Proc> running_;
  std::set<std::string> launching_;              // names with a LaunchRequest in flight
  std::map<std::string, int64_t> incarnations_;  // launches so far, by name
  std::deque<ProcessExit> exits_;
  std::deque<LaunchRequest*> requests_;
  bool stopping_ = false;  // destructor started: no new launches
  bool quit_ = false;      // event thread should return

  // Owned by the event thread.
  std::vector<std::unique_ptr<Child>> children_;

  std::thread thread_;  // last: started after everything above exists
};

}  // namespace edl::roles::cluster
