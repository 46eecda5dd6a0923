// DataLedger: which training records each epoch has trained and how many
// times (docs/distributed.md, data accounting). Training tasks cut every epoch the same
// way, so the ledger counts completions per task range; a completion reported
// late (after the task was reclaimed and re-run) still counts, because its
// gradients were applied. Without failures every record is trained exactly
// once; under failures none is missing and re-training is bounded by the
// tasks in flight when workers were lost.
//
// While the job runs, a record not trained yet is pending: a running job
// re-queues every task it loses, so it trains them all before it ends. Only
// once the job has ended (failed, stopped) are untrained records missing.
//
// With the PS strategy the PS apply each named push at most once
// (roles/ps/applied_pushes.h), so a task a worker started and did not
// report is neither lost nor doubled; a task trained again because a PS
// restored from a checkpoint had lost its updates is counted as redone,
// apart from the trainings. A late report of a task done elsewhere still
// counts as trained twice (its pushes were refused by then; the ledger
// cannot tell). A worker that sent the same successful report twice would
// count twice (the RPC channel never retries a call by itself).
//
// Not thread-safe (MasterCore guards it). Memory: 2 bytes per task and epoch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "roles/master/task_cuts.h"

namespace edl::roles::protocol {
class Reader;
class Writer;
}  // namespace edl::roles::protocol

namespace edl::roles::master {

struct EpochLedger {
  int epoch = 0;        // 1-based
  int64_t records = 0;  // in the data set
  int64_t trained = 0;  // records trained at least once
  int64_t pending = 0;  // records not trained yet, while the job runs
  int64_t missing = 0;  // records not trained by the job's end
  int64_t trained_more_than_once = 0;
  int64_t record_trainings = 0;  // sum over records of times trained
  // Records trained again because a PS restored from a checkpoint had lost
  // their updates (RecordRedone); not counted in the fields above.
  int64_t redone = 0;
};

class DataLedger {
 public:
  DataLedger(TaskCuts cuts, int num_epochs);

  // Records [begin, end) of `epoch` were trained once more.
  // REQUIRES: the range is one of the ledger's tasks, 1 <= epoch <= epochs.
  void RecordTrained(int epoch, int64_t begin, int64_t end);

  // Records [begin, end) of `epoch` were trained again for a PS that had
  // lost their updates: the epoch still trained them once (not "trained
  // twice"); counted as redone. REQUIRES: as RecordTrained.
  void RecordRedone(int epoch, int64_t begin, int64_t end);

  // How often `record` of `epoch` has been trained.
  int TimesTrained(int epoch, int64_t record) const;

  // Per epoch. The records not trained are `pending` while the job runs
  // and `missing` once it has ended (`job_ended`); the other is 0.
  std::vector<EpochLedger> Summary(bool job_ended) const;
  // Record trainings over all epochs (a record trained twice counts twice).
  int64_t records_trained_total() const { return total_; }

  // One line per epoch, the records not trained counted as in Summary:
  //   "epoch 1: 60000/60000 records trained, 0 missing, 512 trained twice or
  //   more, 1024 redone for a restored PS" (the last part only when some were)
  //   "epoch 2: 512/60000 records trained, 59488 pending, 0 trained twice or
  //   more"
  std::string ToString(bool job_ended) const;
  // [{"epoch":1,"records":60000,"trained":60000,"pending":0,"missing":0,
  //   "trained_more_than_once":512,"record_trainings":60512,"redone":0}, ...]
  std::string ToJson(bool job_ended) const;

  // The durable state (roles/master/master_state.cc): the times each task
  // was trained, per epoch. Load replaces it; errors go to the reader.
  void Save(protocol::Writer& w) const;
  void Load(protocol::Reader& r);

 private:
  TaskCuts cuts_;
  int64_t total_ = 0;
  // Per epoch: times each task was trained (allocated on first use), and the
  // running sums (the records not trained counted as pending).
  std::vector<std::vector<uint16_t>> times_;
  std::vector<EpochLedger> sums_;
};

}  // namespace edl::roles::master
