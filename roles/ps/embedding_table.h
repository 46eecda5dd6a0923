// EmbeddingTable: a parameter server's rows of one embedding table, created
// lazily on first access with InitialRow (roles/ps/embedding_spec.h), and
// updated by the same nn::optim::Optimizer code as local training.
//
// Rows are spread over kShards shards by a hash of the id; each shard has
// its own mutex, a growing [capacity, dim] row store, an id -> row index,
// and its own Optimizer instance (built from the job's optimizer config)
// whose slots for this table are shaped like the store. An update gathers
// nothing: it hands the shard's store and the touched local rows to
// Optimizer::ApplySparse, which updates only those rows and their slots
// (lazy sparse update, duplicates summed). When a store grows, its slots
// grow with it; new slot rows get the optimizer's initial slot values
// (e.g. Adagrad's initial_accumulator_value), exactly what a fresh variable
// would get.
//
// Thread-safe: calls on different shards run in parallel; each shard is
// locked only while its rows are read or updated.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "nn/optim/optimizer.h"
#include "roles/ps/embedding_spec.h"
#include "roles/ps/id_row_map.h"
#include "tensor/tensor.h"

namespace edl::roles::ps {

using OptimizerFactory = std::function<std::unique_ptr<nn::optim::Optimizer>()>;

class EmbeddingTable {
 public:
  static constexpr int kShards = 16;

  // `seed` is the job seed (row initialization); `make_optimizer` builds an
  // optimizer equal to the job's (one per shard).
  EmbeddingTable(EmbeddingSpec spec, uint64_t seed, const OptimizerFactory& make_optimizer);
  EmbeddingTable(const EmbeddingTable&) = delete;
  EmbeddingTable& operator=(const EmbeddingTable&) = delete;

  const EmbeddingSpec& spec() const { return spec_; }
  int64_t dim() const { return spec_.dim; }
  // The optimizer's slot names and initial values ({"m", "v"}, {0, 0}).
  const std::vector<std::string>& slot_names() const { return slot_names_; }

  // Writes rows ids[0..n) to out ([n, dim]), creating unseen ones.
  void Gather(const int64_t* ids, int64_t n, float* out);

  // Applies scale * grad (grad: [n, dim]; ids may repeat, repeats are
  // summed) with the optimizer at step `iterations` (its iterations() for
  // this update: learning-rate schedule and bias corrections).
  void Apply(const int64_t* ids, int64_t n, const float* grad, float scale, int64_t iterations);

  // All rows, ascending by id: ids int64 [n], values [n, dim], and one
  // [n, dim] tensor per slot (slot_names() order).
  struct Rows {
    tensor::Tensor ids;
    tensor::Tensor values;
    std::vector<tensor::Tensor> slots;
  };
  Rows Export() const;
  // Inserts or overwrites rows; `slots` follow slot_names() and may be
  // empty (rows then get initial slot values). REQUIRES: shapes as Export.
  void Import(const Rows& rows);

  int64_t size() const;

 private:
  struct Shard {
    mutable std::mutex mu;     // guards everything below
    IdRowMap row_of;           // id -> row in values
    std::vector<int64_t> ids;  // row -> id
    tensor::Tensor values;     // [capacity, dim]
    std::unique_ptr<nn::optim::Optimizer> optimizer;
  };

  static int ShardOf(int64_t id);
  // Apply's work on shard s: the gradient rows at `positions`.
  void ApplyToShard(int64_t s, const std::vector<int64_t>& positions, const int64_t* ids,
                    const float* grad, float scale, int64_t iterations);
  // The local row of `id`, created (initialized) if unseen. REQUIRES: lock.
  int64_t RowOf(Shard& shard, int64_t id);
  // Grows the store (and the slots) to hold at least `rows` rows.
  void Reserve(Shard& shard, int64_t rows);
  // The shard's slot tensors (slot_names() order), or empty if none yet.
  std::vector<tensor::Tensor> SlotsOf(const Shard& shard) const;
  // Groups positions [0, n) by shard.
  static std::vector<std::vector<int64_t>> ByShard(const int64_t* ids, int64_t n);

  EmbeddingSpec spec_;
  RowInitializer initial_row_;
  std::vector<std::string> slot_names_;
  std::vector<float> slot_initial_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace edl::roles::ps
