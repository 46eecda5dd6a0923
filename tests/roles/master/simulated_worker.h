// Test helpers: synthetic validation data with known metrics, and a worker
// simulated as plain calls on a MasterCore (no threads of its own).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "roles/master/master_core.h"

namespace edl::roles::master::testing {

using protocol::Task;
using protocol::TaskType;

// Binary labels and probabilities for record i of the validation data.
float Label(int64_t i);
float Probability(int64_t i);
// The loss a worker reports for record i (any deterministic number).
double RecordLoss(int64_t i);

// ["accuracy", "auc"] for a binary model.
MetricsFactory BinaryMetrics();
// The metrics over validation records [begin, end).
std::vector<std::unique_ptr<nn::metrics::Metric>> MetricsOver(int64_t begin, int64_t end);

class SimulatedWorker {
 public:
  // Registers `name`.
  SimulatedWorker(MasterCore& core, std::string name);

  int64_t id() const { return id_; }
  // Talks to `core` from now on, with the same worker id (a new master that
  // recovered the old one's state).
  void Reattach(MasterCore& core) { core_ = &core; }
  const std::string& name() const { return name_; }

  Task Take();
  // Reports `task` done: training bumps `version` (like a PS push) and
  // reports it; evaluation reports metric states over its records;
  // prediction reports one column, the record index.
  void Complete(const Task& task, std::atomic<int64_t>& version);
  void Fail(const Task& task, const std::string& error);
  bool Heartbeat();  // the stop flag

  // Take + Complete; returns the task's type (kWait/kDone as they come).
  TaskType Step(std::atomic<int64_t>& version);

 private:
  MasterCore* core_;
  std::string name_;
  int64_t id_ = 0;
  int64_t requests_ = 0;  // GetTask request numbers
};

}  // namespace edl::roles::master::testing
