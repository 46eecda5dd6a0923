// UtilizationRecorder: what share of the fake cluster's CPU is allocated to
// pods over time, for the elastic-scheduling experiment
// (scripts/experiments/utilization.sh). Every `interval` it lists the pods
// from the Store and writes one line of totals
//   time_s,capacity_cpu,allocated_cpu,utilization,running_pods,pending_pods
// to `path` and one line per job (label edl-job, else "-")
//   time_s,job,allocated_cpu,running_pods,pending_pods
// to `path` with ".jobs.csv" in place of ".csv". A pod holds its requests
// from being bound to a node until it is terminal or gone (terminating pods
// still hold them, as on a real node). time_s counts from Start().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "tests/fakekube/server/cluster_spec.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class UtilizationRecorder {
 public:
  UtilizationRecorder(Store& store, const std::vector<NodeSpec>& nodes, std::string path,
                      std::chrono::milliseconds interval);
  ~UtilizationRecorder();  // Stop()s
  Status Start();
  void Stop();
  // One sample now (also used by tests).
  void SampleOnce();

 private:
  Store& store_;
  int64_t capacity_milli_cpu_ = 0;
  const std::string path_;
  const std::chrono::milliseconds interval_;
  std::FILE* totals_ = nullptr;
  std::FILE* jobs_ = nullptr;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace edl::fakekube
