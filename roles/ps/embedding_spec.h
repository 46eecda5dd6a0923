// EmbeddingSpec: what a parameter server needs to know about one embedding
// table (a Keras Embedding layer's "<layer>/embeddings" weight) to create
// its rows lazily, and InitialRow, which creates one.
//
// A row's initial value depends only on (job seed, table name, id) — not on
// the order rows are first touched, nor on which PS holds the row — so a
// job's tables are the same whatever the PS count. Fan-dependent
// initializers (glorot_*, he_*, lecun_*, variance_scaling) use the fans of
// the whole [input_dim, output_dim] table, so each row has the distribution
// Keras would give it; identity gives row id of gain * I; orthogonal (a
// whole-matrix property) falls back to an orthogonal [1, dim] row.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/initializers.h"
#include "nn/keras/model.h"
#include "tensor/tensor.h"

namespace edl::roles::ps {

struct EmbeddingSpec {
  std::string name;       // the parameter name, "<layer>/embeddings"
  int64_t input_dim = 0;  // rows of the Keras table (ids are < input_dim)
  int64_t dim = 0;        // output_dim: the row size
  nn::InitializerOptions initializer;
};

// The model's embedding tables, in parameter order. Fails if a weight that
// is not an Embedding table has a name ending in "/embeddings" (the
// partitioning relies on the suffix).
Result<std::vector<EmbeddingSpec>> FindEmbeddingTables(const nn::keras::Model& model);

// Makes the initial rows of one table: row `id` of `spec`'s table in a job
// with `seed`, as a float32 [dim] written to out[0..dim). Each row draws
// from its own SplitMix64 stream seeded by (seed, table name, id); the
// initializer's options are resolved once, so a row costs its draws
// (tables of millions of rows create most of them on first touch).
class RowInitializer {
 public:
  RowInitializer(const EmbeddingSpec& spec, uint64_t seed);
  void operator()(int64_t id, float* out) const;

 private:
  nn::InitializerOptions options_;  // with the table's fans folded in
  uint64_t name_hash_;              // of the table name
  uint64_t seed_;                   // the job's
  int64_t dim_;
  bool identity_;
};

// RowInitializer(spec, seed)(id, out), for a single row.
void InitialRow(const EmbeddingSpec& spec, uint64_t seed, int64_t id, float* out);

}  // namespace edl::roles::ps
