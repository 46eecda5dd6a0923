// HostedCluster: the job's processes as children of a local job host
// (`edl train`, roles/job/job_host.h) instead of the master, so that a
// master that dies can be replaced while its workers and PS go on
// (docs/distributed.md, 'A master that survives its own death'). The master
// asks the host to launch and signal processes, and hears of their exits,
// over a Unix socket (an abstract name, "@edl-host-..."), one JSON object per
// line:
//
//   master -> host  {"secret": S}                      first, the job secret
//   host -> master  {"running": [names]}               then, what runs now
//   master -> host  {"id": N, "launch": {"name", "args": [...], "env": {...}}}
//                   {"id": N, "signal": {"name", "signal": 15}}
//   host -> master  {"id": N, "error": ""}             the answer ("" = OK)
//                   {"exit": {"name", "incarnation", "signaled", "code"}}
//
// Exits of processes that ended before the master connected are not sent:
// the running list says they are gone. Thread-safe; one reader thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "roles/cluster/cluster.h"

namespace edl::roles::cluster {

// Creates a listening socket for `name` ("@..." is abstract); the fd.
Result<int> ListenUnix(const std::string& name);
// Connects to it; the fd.
Result<int> ConnectUnix(const std::string& name);
// Writes `line` and a newline; false if the peer is gone.
bool WriteLine(int fd, const std::string& line);

class HostedCluster final : public Cluster {
 public:
  // Connects to the host at `socket_name`, authenticates with `secret` and
  // reads the processes running now. Unavailable naming the socket if no
  // host answers.
  static Result<std::unique_ptr<HostedCluster>> Connect(const std::string& socket_name,
                                                        const std::string& secret);
  ~HostedCluster() override;

  Status Launch(const ProcessSpec& spec) override;
  Status Signal(const std::string& name, int signal) override;
  std::optional<ProcessExit> WaitExit(std::chrono::milliseconds timeout) override;
  std::vector<std::string> Running() const override;

  explicit HostedCluster(int fd) : fd_(fd) {}

 private:
  // `buffer`: what was read after the hello.
  void ReadLoop(std::string buffer);
  // Sends a request and waits for its answer.
  Status Call(const std::string& op, const std::string& body_json);

  const int fd_;
  std::thread reader_;
  std::mutex write_mu_;
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  int64_t next_id_ = 1;
  std::map<int64_t, std::string> answers_;  // id -> error ("" = OK)
  std::deque<ProcessExit> exits_;
  std::set<std::string> running_;
  bool closed_ = false;  // the host hung up
};

}  // namespace edl::roles::cluster
