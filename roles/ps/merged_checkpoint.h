// MergePartitions: turns the partitions of a parameter-server checkpoint
// version (roles/ps/ps_checkpoint.h) back into one ordinary checkpoint of
// the whole model (roles/local/checkpoint.h), e.g. for the final export or for
// evaluation: dense weights as they are, every embedding table as its full
// [input_dim, dim] tensor — rows no PS ever created get the value the PS
// would have created (InitialRow with the job seed) — and the dense
// parameters' optimizer slots. Embedding-row slots are not carried (a
// single-process run restarted from it starts them afresh).
// Pure function, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/keras/model.h"
#include "roles/local/checkpoint.h"

namespace edl::roles::ps {

// `model` is the job's model (only its weight names, shapes and Embedding
// layers are read); `seed` the job seed. Errors name the weight that is
// missing or mis-shaped.
Result<Checkpoint> MergePartitions(const std::vector<Checkpoint>& partitions,
                                   const nn::keras::Model& model, uint64_t seed);

// ReadPartitions of the newest complete version under root, merged.
Result<Checkpoint> ReadMergedCheckpoint(const std::string& root, const nn::keras::Model& model,
                                        uint64_t seed);

}  // namespace edl::roles::ps
