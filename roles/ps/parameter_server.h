// ParameterServer: one PS of a job (docs/distributed.md; ElasticDL's
// PS done better): it holds its partition of the model (roles/ps/partition.h) and
// applies workers' gradients with the job's optimizer — the same
// nn::optim code as local training, dense variables by name (ApplyDense),
// embedding rows lazily created and sparsely updated (EmbeddingTable).
//
// Version = the number of updates this PS has applied (= its optimizer's
// iterations(); each update ends with FinishStep). An update is:
//   * async (default): every accepted push, applied at once; with
//     lr_staleness_modulation its gradients are scaled by
//     1 / max(1, version - push.version) (Zhang et al. 2016);
//   * sync: the average of grads_to_wait pushes (dense and sparse alike),
//     applied when the last of them arrives. A push computed on a version
//     older than version - sync_version_tolerance is answered
//     accepted=false and dropped (the worker pulls and recomputes).
// Every push counts, including one with no gradients for this PS (workers
// send one to every PS so that the PS versions advance together), except
// a named push (task, minibatch) taken before, which is dropped
// (roles/ps/applied_pushes.h: effectively-once updates).
//
// Checkpoints (layout: roles/ps/ps_checkpoint.h): when the version reaches
// a multiple of checkpoint_steps the pushing thread snapshots the
// partition (weights, embedding rows and all optimizer slots) and writes
// it; keep_checkpoint_max (0 = all) complete versions are kept. Create()
// restores the newest complete version under checkpoint_dir (else under
// checkpoint_dir_for_init), written by any number of PS. In async mode a
// snapshot may include the few pushes that were in flight when it was
// taken.
//
// Thread-safety: all methods are thread-safe and there is no global lock on
// the hot path: each dense parameter and each embedding shard has its own
// mutex; pushes hold a reader lock that only a checkpoint snapshot takes
// exclusively. Sync-mode pushes serialize on the round's accumulator.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/optim/optimizer.h"
#include "roles/local/checkpoint.h"
#include "roles/local/compiled_model.h"
#include "roles/protocol/services.h"
#include "roles/ps/applied_pushes.h"
#include "roles/ps/embedding_table.h"

namespace edl::roles::ps {

struct ParameterServerOptions {
  int ps_index = 0;
  int num_ps = 1;
  bool use_async = true;
  int grads_to_wait = 1;                 // sync: pushes averaged per update
  int64_t sync_version_tolerance = 0;    // sync: how stale a push may be
  bool lr_staleness_modulation = false;  // async only
  std::string checkpoint_dir;            // "" = no checkpoints
  int64_t checkpoint_steps = 0;          // 0 = never
  int keep_checkpoint_max = 0;           // 0 = keep all
  // Restored from when checkpoint_dir holds no complete version.
  std::string checkpoint_dir_for_init;
  // The job seed; with the table name and id it fixes each embedding row's
  // initial value.
  uint64_t seed = 0;
  // Start embedding rows (and their slots) from the model's tables instead
  // of lazily: for a model restored from a single-process checkpoint.
  bool tables_from_model = false;
};

class ParameterServer : public protocol::PsService {
 public:
  // Keeps this PS's partition of `model` (built from the job's spec and
  // seed, so dense initial values agree with every worker's) and its
  // optimizer; then restores the newest checkpoint if any. Errors: bad
  // options, a model whose tables cannot be identified, an unreadable or
  // mismatching checkpoint (naming the file and tensor).
  static Result<std::unique_ptr<ParameterServer>> Create(const ParameterServerOptions& options,
                                                         CompiledModel model);
  ~ParameterServer() override;

  Result<protocol::PullDenseResponse> PullDense(const protocol::PullDenseRequest& r) override;
  Result<protocol::PullRowsResponse> PullRows(const protocol::PullRowsRequest& r) override;
  Result<protocol::PushGradientsResponse> PushGradients(
      const protocol::PushGradientsRequest& r) override;

  int64_t version() const { return version_.load(); }
  // The named pushes this PS has taken.
  const AppliedPushes& applied_pushes() const { return applied_; }
  // Names of the dense parameters this PS owns, in model order.
  std::vector<std::string> DenseNames() const;
  // Embedding rows held (created so far) in `table`; -1 if no such table.
  int64_t NumRows(const std::string& table) const;
  // Writes a checkpoint of the current state as version() now.
  Status SaveCheckpoint();

  // How the periodic checkpoints fare (docs/distributed.md, 'Checkpoints'):
  // a failed one is retried a quarter interval later, then at each due
  // version, until one succeeds.
  struct CheckpointHealth {
    int64_t last_good_version = -1;  // written or restored; -1: none
    int64_t failures = 0;            // failed attempts since the last good one
    int64_t failed_version = -1;     // the last failed attempt's version
    std::string last_error;          // its error
  };
  CheckpointHealth checkpoint_health() const;

 private:
  struct DenseParameter {
    std::string name;
    bool trainable = true;  // false: worker state (moving statistics)
    mutable std::mutex mu;  // guards value (and its optimizer slots)
    // Pulls answer with this tensor itself (no copy), so a writer first
    // calls ForWriting: a value some answer still holds is copied, and
    // that answer keeps the version it was given.
    tensor::Tensor value;
  };
  // Makes p.value this PS's alone before it is written. REQUIRES: p.mu.
  static void ForWriting(DenseParameter& p);
  // A sync round's accumulated gradients (guarded by sync_mu_).
  struct SyncRound {
    int pushes = 0;
    // (task id, minibatch) of its named pushes: taken, not yet applied.
    std::vector<std::pair<int64_t, int64_t>> claims;
    std::map<std::string, tensor::Tensor> dense;  // sums
    std::map<std::string, std::vector<protocol::SparseGradient>> sparse;
  };

  explicit ParameterServer(const ParameterServerOptions& options);
  Status Init(CompiledModel& model);
  Status Restore(const std::string& root, int64_t version);
  // Every push takes this prefix in its errors: "PS 1 of 2".
  std::string Who() const;
  // InvalidArgument naming the first bad gradient, if any.
  Status Validate(const protocol::PushGradientsRequest& r) const;
  // PushGradients without the pull_dense answer.
  Result<protocol::PushGradientsResponse> ApplyPush(const protocol::PushGradientsRequest& r);
  // Applies scale * gradients (dense and sparse) as one update.
  void ApplyUpdate(const std::vector<NamedTensor>& dense,
                   const std::vector<protocol::SparseGradient>& sparse, float scale);
  // Writes a checkpoint when `version` is due one; failures are logged.
  void MaybeCheckpoint(int64_t version);
  Status WriteCheckpointAt(int64_t version);
  Checkpoint Snapshot(int64_t version) const;  // REQUIRES: gate_ exclusive

  const ParameterServerOptions options_;
  std::string spec_json_;
  std::unique_ptr<nn::optim::Optimizer> optimizer_;     // dense updates
  std::vector<std::unique_ptr<DenseParameter>> dense_;  // owned, model order
  std::map<std::string, DenseParameter*> dense_by_name_;
  std::map<std::string, std::unique_ptr<EmbeddingTable>> tables_;
  std::atomic<int64_t> version_{0};

  // Pushes hold it shared; a checkpoint snapshot holds it exclusively.
  mutable std::shared_mutex gate_;
  std::mutex sync_mu_;  // guards round_
  SyncRound round_;
  std::mutex checkpoint_mu_;  // serializes checkpoint writes and pruning
  mutable std::mutex health_mu_;
  CheckpointHealth health_;           // guarded by health_mu_
  std::atomic<int64_t> retry_at_{0};  // a failed checkpoint's retry version (0: none)
  AppliedPushes applied_;             // which named pushes were taken
};

}  // namespace edl::roles::ps
