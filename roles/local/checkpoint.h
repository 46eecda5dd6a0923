// Checkpoint: a model version on disk (docs/checkpoints.md). One directory per version,
// `<root>/version-<N>/`, holding `manifest.json` (format, version, epoch, the
// full model spec, and for every tensor its name, group, shape, dtype, byte
// offset, size and CRC-32) and `tensors.bin` (the raw little-endian bytes).
// A version directory is written under a temporary name and renamed into
// place, so a crash never leaves a half checkpoint; readers verify sizes and
// checksums and name the file and tensor when something is wrong.
//
// Groups: "model" holds the model's weights (Keras order), "optimizer" the
// optimizer's slot variables, so training resumes exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "roles/named_tensor.h"
#include "tensor/tensor.h"

namespace edl::roles {

struct Checkpoint {
  int64_t version = 0;                 // model version: optimizer steps taken
  int64_t epoch = 0;                   // epochs completed when it was written
  std::string model_spec_json;         // the full spec, so nothing else is needed
  std::string optimizer_json;          // the optimizer's config
  std::vector<NamedTensor> model;      // weights in the model's order
  std::vector<NamedTensor> optimizer;  // slot variables
};

// Writes `<root>/version-<version>` atomically, creating root if needed, then
// deletes the oldest versions so that at most keep_max remain (keep_max <= 0
// keeps all). Replaces an existing directory of the same version.
Status WriteCheckpoint(const std::string& root, const Checkpoint& checkpoint, int keep_max);

// Reads a version directory, or, given a root holding version-* directories,
// the newest complete one.
Result<Checkpoint> ReadCheckpoint(const std::string& path);

// Versions present under root, ascending. Missing root gives an empty list.
std::vector<int64_t> ListCheckpointVersions(const std::string& root);

// Whether `path` is a single-process checkpoint (local training, an --output
// export), which CompileModel can restore (it carries the model spec), as
// opposed to the PS layout of a distributed job's --checkpoint_dir.
bool IsSingleProcessCheckpoint(const std::string& path);

// --checkpoint_dir_for_init may name a model that is not a path (one `edl
// sql` stored in a database: sqlflow/stored_model.h). The binary registers
// what recognizes such a name and what fetches it into a local directory;
// LocalCheckpointPath returns that directory for such a name, and anything
// else as it is.
void SetCheckpointFetcher(std::function<bool(const std::string&)> recognizes,
                          std::function<Result<std::string>(const std::string&)> fetch);
Result<std::string> LocalCheckpointPath(const std::string& path);

}  // namespace edl::roles
