// Partitioning of a model over parameter servers, shared by the PS and the
// workers (and by the PS checkpoint layout, so it must never change):
//
//   * a dense parameter lives whole on PS PsOfParameter(name, num_ps) =
//     FNV-1a-64(name) mod num_ps (FNV-1a: offset basis 14695981039346656037,
//     prime 1099511628211, over the name's bytes);
//   * row `id` of an embedding table lives on PS PsOfId(id, num_ps) =
//     id mod num_ps (ids are >= 0).
//
// Embedding tables are the weights of Keras Embedding layers; their
// parameter names end with "/embeddings" and no other weight's does (the PS
// checks this when it starts). Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace edl::roles::ps {

// FNV-1a 64-bit hash of `bytes`.
uint64_t Fnv1a64(const std::string& bytes);

// REQUIRES: num_ps >= 1.
int PsOfParameter(const std::string& name, int num_ps);
// REQUIRES: num_ps >= 1, id >= 0.
int PsOfId(int64_t id, int num_ps);

// True for an Embedding layer's table ("<layer>/embeddings").
bool IsEmbeddingTable(const std::string& parameter_name);

}  // namespace edl::roles::ps
