// The messages the roles exchange (docs/distributed.md, docs/rpc.md): worker <-> master and
// worker <-> parameter server. Plain values; roles/protocol/codec.h turns
// each into bytes and back. Adding a field means adding it to the message's
// field list in codec.cc (one list, walked by both the writer and the reader)
// and to the codec tests' samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "roles/named_tensor.h"
#include "tensor/tensor.h"

namespace edl::roles::protocol {

// ---- Master -------------------------------------------------------------

enum class TaskType : uint8_t {
  kWait = 0,  // nothing to do right now: ask again after a short pause
  kTraining = 1,
  kEvaluation = 2,
  kPrediction = 3,
  kDone = 4,  // the job is over (or this worker is no longer wanted): exit
};

enum class Dataset : uint8_t { kTraining = 0, kValidation = 1, kPrediction = 2 };

// A lease on records [begin, end) of one data set.
struct Task {
  int64_t id = 0;
  TaskType type = TaskType::kWait;
  Dataset dataset = Dataset::kTraining;
  int64_t begin = 0;
  int64_t end = 0;
  int32_t epoch = 0;
  // Evaluation: the model version being evaluated.
  int64_t model_version = 0;
  // Seeds the order of records inside the task (training).
  uint64_t seed = 0;
};

struct RegisterWorkerRequest {
  std::string name;  // "worker-3": the process's cluster name
  int64_t pid = 0;
  int32_t num_threads = 0;  // its tensor engine's CPU threads (edl status)
};
struct RegisterWorkerResponse {
  int64_t worker_id = 0;  // unique per incarnation
};

struct HeartbeatRequest {
  int64_t worker_id = 0;
};
struct HeartbeatResponse {
  bool stop = false;  // the worker should hand back its task and exit
};

struct GetTaskRequest {
  int64_t worker_id = 0;
  // Numbers the worker's GetTask calls (1, 2, ...; a retry repeats the
  // number): the master answers a repeated number with the task it gave the
  // first time, still leased, so a lost reply leaks no lease. 0: no number.
  int64_t request = 0;
};

struct MetricState {
  std::string name;
  std::vector<double> state;  // nn::metrics::Metric::State()
};

struct ReportTaskRequest {
  int64_t worker_id = 0;
  int64_t task_id = 0;
  bool ok = true;
  std::string error;          // when !ok: why, naming the record range
  int64_t model_version = 0;  // the newest model version the worker saw
  double loss_sum = 0;        // sum over the task's records
  int64_t samples = 0;
  // Records of the task left out as corrupt (--skip_corrupt_records).
  int64_t records_skipped = 0;
  std::vector<MetricState> metrics;  // evaluation (and training) metric states
  tensor::Tensor predictions;        // prediction tasks: [records, outputs]
};
struct ReportTaskResponse {
  // The report ended this worker's lease on the task (false: a late or
  // repeated report, or one the master did not count). With the reply gate
  // of a master that journals, the report is durable when this is answered.
  bool counted = false;
};

// ---- Master: the allreduce ring (docs/allreduce.md) ----------------------

// A worker registers the address of its ring listener (net/collective/collective.h).
struct JoinRingRequest {
  int64_t worker_id = 0;
  std::string address;  // "host:port"
};

// Asked at step boundaries; the full view is returned either way.
struct RingViewRequest {
  int64_t worker_id = 0;
  uint64_t known_version = 0;  // the version the worker's ring was formed at
};

struct RingMember {
  int64_t worker_id = 0;  // the incarnation that joined
  std::string name;       // "worker-3"
  std::string address;    // its ring listener, "host:port"
};

// The answer to JoinRing and GetRingView.
struct RingView {
  uint64_t version = 0;             // 0: nobody has joined yet
  std::vector<RingMember> members;  // ring order; rank = index
  // The rank whose state everyone takes before the next step; -1: none.
  int32_t source_rank = -1;
};

// Every member of the ring of `version` has taken the source's state.
struct RingSyncedRequest {
  int64_t worker_id = 0;
  uint64_t version = 0;
};
struct RingSyncedResponse {};

// ---- Parameter server -------------------------------------------------

// Dense parameters of this PS's partition, unless the caller already has
// the current version.
// How dense parameters and gradients travel (--gradient_compression).
enum class Compression : uint8_t { kNone = 0, kBFloat16 = 1, kFloat16 = 2 };

struct PullDenseRequest {
  int64_t known_version = -1;
  // Not kNone: the PS sends float32 parameters as this 16-bit type.
  Compression compression = Compression::kNone;
};
struct PullDenseResponse {
  int64_t version = 0;
  std::vector<NamedTensor> params;  // empty when known_version == version
};

// Rows of one embedding table; rows never seen are created (initialized)
// on first access.
struct PullRowsRequest {
  std::string table;   // the Parameter name, e.g. "embedding/embeddings"
  tensor::Tensor ids;  // int64 [n], unique, each owned by this PS
};
struct PullRowsResponse {
  tensor::Tensor values;  // float32 [n, dim]
};

struct SparseGradient {
  std::string table;
  tensor::Tensor ids;     // int64 [n], unique
  tensor::Tensor values;  // float32 [n, dim]
};

struct PushGradientsRequest {
  int64_t worker_id = 0;
  int64_t version = 0;  // the dense version the gradients were computed on
  // The push's identity (roles/ps/applied_pushes.h): the training task and
  // the minibatch's index in it, from 0; a PS takes each at most once.
  // task_id 0: unnamed, always applied.
  int64_t task_id = 0;
  int64_t minibatch = 0;
  // A task whose report the master has made durable: the PS forgets its
  // count (0: none), if it holds all settled_minibatches of it (the pushes
  // the worker made of the task; 0: no check).
  int64_t settled_task = 0;
  int64_t settled_minibatches = 0;
  std::vector<NamedTensor> dense;
  std::vector<SparseGradient> sparse;
  // Non-trainable variables the worker updated itself (batch norm moving
  // statistics): their values replace the PS's (last writer wins).
  std::vector<NamedTensor> state;
  // Also answer with the dense parameters, as a PullDense sent right after
  // this push would (one round trip instead of two), in this form.
  bool pull_dense = false;
  Compression pull_compression = Compression::kNone;
};
struct PushGradientsResponse {
  bool accepted = true;  // sync SGD: false when too stale
  int64_t version = 0;   // the PS's version after this push
  // The push's minibatch was taken before and was dropped.
  bool duplicate = false;
  // The push's minibatch is beyond what this PS has of the task (it was
  // restored from a checkpoint): not applied; the worker runs the task
  // again from task_taken.
  bool behind = false;
  // How many minibatches of the push's task this PS has taken (a prefix).
  int64_t task_taken = 0;
  // pull_dense: the PullDense answer (every dense parameter, at params_version).
  int64_t params_version = 0;
  std::vector<NamedTensor> params;
};

}  // namespace edl::roles::protocol
