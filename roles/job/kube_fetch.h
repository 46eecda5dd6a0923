// Private to roles/job/kube_*.cc: the client's side of held outputs
// (roles/job/held_outputs.h). A job submitted and followed from this
// machine with --output / --prediction_output on no --volume has the master
// write them in its pod; this fetches them through the API server's service
// proxy once the job succeeded, and puts them in place here as a local job
// would (written beside, then renamed over the path).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "roles/job/process_options.h"

namespace edl::roles::job {

// How long the master holds the outputs for the client (--hold_outputs).
inline constexpr int kHoldOutputsSeconds = 600;

struct FetchedOutput {
  std::string name;   // "output", "prediction_output"
  std::string local;  // the path on this machine
};

// Rewrites `m` so that its master writes the outputs that lie on no
// --volume inside its pod and holds them (--hold_outputs); returns what to
// fetch. Refuses an --output the ring's rank 0 would write in a worker pod
// (AllreduceStrategy), and a local --output that exists and is not an edl
// export.
Result<std::vector<FetchedOutput>> HoldOutputsInPod(MasterProcessOptions* m);

class OutputFetcher {
 public:
  // Polls the job's master every two seconds until its outputs are ready,
  // then fetches them (on a client of its own), on a thread.
  OutputFetcher(const KubeJobOptions& access, std::string job, std::string secret,
                std::vector<FetchedOutput> outputs);
  ~OutputFetcher();
  OutputFetcher(const OutputFetcher&) = delete;
  OutputFetcher& operator=(const OutputFetcher&) = delete;

  // Stops polling (a fetch under way is finished first): OK once every
  // output is in place here; the error otherwise.
  Status Finish();

 private:
  void Run();

  const KubeJobOptions access_;
  const std::string job_, secret_;
  const std::vector<FetchedOutput> outputs_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  Status result_;
  bool fetched_ = false;
  std::string last_error_;
  std::thread thread_;
};

}  // namespace edl::roles::job
