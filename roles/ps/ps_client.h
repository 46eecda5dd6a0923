// PsClient: a worker's view of the parameter servers. It routes by the
// shared partitioning (roles/ps/partition.h): dense parameters to
// PsOfParameter(name), embedding rows to PsOfId(id). The worker keeps its
// full model locally as a cache — dense parameters and whole embedding
// tables — and PsClient writes pulled values into it.
//
// Calls to different PS run in parallel, each PS's calls in order on its
// own long-lived thread (roles/ps/ps_lanes.h). A push may be left in flight
// (StartPush) while the worker computes its next step: a pull queued after
// it reaches each PS after it, so the pull sees the push, exactly as if the
// push had been waited for. Errors carry the PS index ("PS 1: ..."). Not
// thread-safe: one worker thread uses it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "nn/autograd.h"
#include "roles/protocol/services.h"
#include "roles/ps/ps_lanes.h"
#include "tensor/tensor.h"

namespace edl::roles::ps {

// A push's identity (PushGradientsRequest): task 0 is unnamed.
struct PushId {
  int64_t task_id = 0;
  int64_t minibatch = 0;
  int64_t settled_task = 0;
  int64_t settled_minibatches = 0;  // the pushes the settled task had
};

class PsClient {
 public:
  // services[i] is PS i. REQUIRES: non-empty, no nulls; the services outlive
  // the client.
  // `compression`: how dense parameters are pulled and gradients pushed
  // (roles/ps/compression.h); worker state always travels as float32.
  explicit PsClient(std::vector<protocol::PsService*> services,
                    protocol::Compression compression = protocol::Compression::kNone);
  ~PsClient();  // waits for a push in flight

  int num_ps() const { return static_cast<int>(services_.size()); }

  // Pulls every dense parameter from its PS into `params` (by name; tables
  // included, so workers share batch norm moving statistics), skipping a PS whose
  // version is the one last pulled. Errors: a PS failing, a pulled name
  // not in params, a shape mismatch.
  Status PullDense(const std::vector<nn::Parameter*>& params);

  // Pulls the rows `ids` (int64 or float, any shape, repeats allowed) of
  // `table` from their PS and writes them into table.value's rows.
  // Errors: an id outside [0, table rows), a PS failing.
  Status PullRows(nn::Parameter& table, const tensor::Tensor& ids);

  // The same rows gathered: unique ids (ascending, int64 [u]), their values
  // [u, dim], and for each position of `ids` the index of its row (int64,
  // ids' shape).
  struct Rows {
    tensor::Tensor unique_ids;
    tensor::Tensor values;
    tensor::Tensor inverse;
  };
  Result<Rows> GatherRows(const std::string& table, const tensor::Tensor& ids);

  // Pushes the gradients of `params` (trainable ones with a grad and/or a
  // sparse_grad) and the values of non-trainable ones (state the worker
  // updates itself, e.g. moving statistics, which replace the PS's):
  // dense grads to their PS, embedding-table grads as rows
  // (repeated ids summed; a dense grad of a table is sent as its non-zero
  // rows) to the rows' PS. Every PS gets one request, possibly empty, with
  // the version last pulled from it.
  struct PushResult {
    bool accepted = true;           // every PS accepted
    std::vector<bool> accepted_by;  // per PS
    std::vector<int64_t> versions;  // per PS, after the push
    // Named pushes (PushId): per PS, the task's minibatches it has taken
    // (roles/ps/applied_pushes.h), and how many PS dropped this one as
    // taken before.
    std::vector<int64_t> task_taken;
    int duplicates = 0;
    int behind = 0;  // PS that lack minibatches of the task before this one
  };

  // REQUIRES: no push in flight.
  Result<PushResult> PushGradients(const std::vector<nn::Parameter*>& params,
                                   int64_t worker_id = 0);

  // The same in two halves: StartPush takes what PushGradients sends (the
  // gradients by handle, which the caller must not write to afterwards, as
  // ZeroGrad does not; state values copied) and queues it on every PS's
  // lane; FinishPush waits for the answers. A failed FinishPush keeps the
  // push: calling it again resends it to the PS that did not answer (those
  // that did are not sent it twice). REQUIRES: StartPush with no push in
  // flight; FinishPush with one.
  // `with_dense_pull`: each PS answers the push with its dense parameters,
  // as a PullDense queued right after it would (one round trip instead of
  // two); the next PullDense takes them from those answers.
  void StartPush(const std::vector<nn::Parameter*>& params, int64_t worker_id = 0,
                 bool with_dense_pull = false, PushId id = {});
  Result<PushResult> FinishPush();
  bool push_in_flight() const { return push_ != nullptr; }
  // Gives up on a push FinishPush failed (REQUIRES: none queued, i.e. after
  // a failed FinishPush).
  void AbandonPush();

  // The dense version last pulled from each PS (-1 before the first pull).
  const std::vector<int64_t>& versions() const { return versions_; }
  // Forgets the versions so that the next PullDense fetches everything
  // (after a PS restarted).
  void ForgetVersions();

 private:
  struct InFlightPush;
  // Runs fn(i) for every PS after what is queued on its lane; on the
  // calling thread when there is one PS and nothing in flight.
  Status ForEachPs(const std::function<Status(int)>& fn);
  // Queues push_ on the lanes.
  void QueuePush();
  // Waits for push_'s answers, queueing it again first (to the PS that have
  // not answered) when a previous wait failed.
  Status AwaitPush();
  std::vector<protocol::PushGradientsRequest> PushRequests(
      const std::vector<nn::Parameter*>& params, int64_t worker_id) const;

  std::vector<protocol::PsService*> services_;
  protocol::Compression compression_;
  std::vector<int64_t> versions_;
  std::unique_ptr<InFlightPush> push_;
  PsLanes lanes_;  // last: destroyed (drained) first
};

}  // namespace edl::roles::ps
