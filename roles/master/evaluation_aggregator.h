// EvaluationAggregator: decides when to evaluate and merges the workers'
// evaluation reports (docs/distributed.md; ElasticDL's evaluation service done
// better: workers send mergeable metric states, not raw outputs).
//
// Triggers (MasterCore feeds the events and creates the tasks):
//  * evaluation_steps > 0: the first training report whose model version
//    reaches the next multiple of evaluation_steps starts a round at that
//    version. At most one round is in flight; versions that pass while one
//    is in flight are skipped (after a round, the next starts at the next
//    multiple beyond the version that started it), so evaluation never
//    falls behind training by more than one round.
//  * evaluation_steps == 0: a round after every epoch.
//  * the end of training: a final round (if the last round was not at that
//    version already), after the one in flight.
// The round evaluates the model version the PS serve while it runs; the
// version recorded is the one that started it, and the epoch the one whose
// training it evaluates: the epoch whose end started it, or (every
// evaluation_steps) the epoch of the training report that reached its
// version; the final round's is the last epoch trained.
//
// Not thread-safe (MasterCore guards it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/metrics/metric.h"
#include "roles/local/evaluation.h"
#include "roles/master/master_options.h"
#include "roles/protocol/messages.h"

namespace edl::roles::protocol {
class Reader;
class Writer;
}  // namespace edl::roles::protocol

namespace edl::roles::master {

struct EvaluationRecord {
  int64_t model_version = 0;
  int epoch = 0;            // the training epoch evaluated; 0 without training
  bool final = false;       // the round at the end of training
  EvaluationResult result;  // samples, mean loss, metrics (factory order)

  // "evaluation at version 1200: loss 0.3100 accuracy 0.8870"
  std::string ToString() const;
};

class EvaluationAggregator {
 public:
  // `has_validation_data` false: never evaluates.
  EvaluationAggregator(int64_t evaluation_steps, bool has_validation_data,
                       MetricsFactory make_metrics);

  // Events. `epoch`: the training epoch of the report that brought
  // `version` (OnModelVersion), that ended (OnEpochEnd), or that ended
  // last (OnTrainingEnd; 0 in a job without training).
  void OnModelVersion(int64_t version, int epoch);
  void OnEpochEnd(int epoch, int64_t version);
  void OnTrainingEnd(int64_t version, int epoch);

  // A round to start now (none in flight and one is due): the version it
  // evaluates and the epoch to label it with; clears it. Call StartRound
  // with them and the number of tasks created.
  struct DueRound {
    int64_t version = 0;
    int epoch = 0;
  };
  std::optional<DueRound> TakeRoundToStart();
  // REQUIRES: num_tasks > 0, no round in flight. Fails if the metrics
  // factory fails.
  Status StartRound(int64_t version, int epoch, int64_t num_tasks);

  // An accepted, successful evaluation task report of the round in flight.
  // Returns the finished record when this was its last task. Errors (a
  // metric the model lacks, a state of the wrong size) change nothing.
  Result<std::optional<EvaluationRecord>> AddReport(const protocol::ReportTaskRequest& report);

  bool in_flight() const { return round_.has_value(); }
  // A round in flight or due.
  bool busy() const { return round_.has_value() || pending_.has_value(); }
  const std::vector<EvaluationRecord>& history() const { return history_; }

  // The durable state (roles/master/master_state.cc): what is due, the
  // round in flight with its metrics' states so far, the history. Load
  // replaces it; errors go to the reader.
  void Save(protocol::Writer& w) const;
  void Load(protocol::Reader& r);

 private:
  struct Round {
    int64_t version = 0;
    int epoch = 0;
    bool final = false;
    int64_t tasks = 0;
    int64_t tasks_done = 0;
    double loss_sum = 0;
    int64_t samples = 0;
    std::vector<std::unique_ptr<nn::metrics::Metric>> metrics;
  };

  int64_t steps_;
  bool enabled_;
  MetricsFactory make_metrics_;
  int64_t next_due_;
  bool training_ended_ = false;
  std::optional<int64_t> pending_;
  int pending_epoch_ = 0;  // the epoch of the round due (with pending_)
  bool pending_final_ = false;
  std::optional<int64_t> last_started_;
  std::optional<Round> round_;
  std::vector<EvaluationRecord> history_;
};

}  // namespace edl::roles::master
