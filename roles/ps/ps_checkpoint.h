// The parameter servers' checkpoint layout: each PS writes its partition of
// a version as an ordinary roles/local/checkpoint.h directory (manifest.json +
// tensors.bin, CRC-checked, written under a temporary name and renamed):
//
//   <root>/version-<V>/ps-<i>-of-<N>/manifest.json, tensors.bin
//
// A version is complete when, for some N, all of ps-0-of-N .. ps-<N-1>-of-N
// are present. A partition holds:
//   "model" group:     every dense parameter the PS owns, by name; and per
//                      embedding table "<table>#ids" (int64 [n], ascending)
//                      and "<table>#values" (float32 [n, dim]);
//   "optimizer" group: dense slots "<parameter>/<slot>" (Optimizer::Slots
//                      names) and per table "<table>/<slot>#values"
//                      ([n, dim], rows aligned with "<table>#ids"); and
//                      the named pushes the partition holds
//                      (roles/ps/applied_pushes.h): "#applied/taken"
//                      (int64 [n, 2]: task id, minibatches) and
//                      "#applied/settled" (int64 [m, 2]: id ranges), read
//                      back only by a PS of a job with the same PS count;
//   version = the PS's version (= its optimizer iterations), the model spec
//   and the optimizer config.
// Any PS count can read any complete version: partitions are merged and
// re-split with roles/ps/partition.h.
//
// Functions are safe to call from several processes that write different
// partitions; pruning only removes versions older than the newest complete
// one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "roles/local/checkpoint.h"

namespace edl::roles::ps {

// "ps-<index>-of-<num_ps>".
std::string PartitionDirName(int index, int num_ps);
// "<root>/version-<version>/ps-<index>-of-<num_ps>".
std::string PartitionPath(const std::string& root, int64_t version, int index, int num_ps);

// Writes one partition atomically (replacing an older copy of it).
Status WritePartition(const std::string& root, int index, int num_ps, const Checkpoint& partition);

// Complete versions under root, ascending (missing root: empty).
std::vector<int64_t> ListCompleteVersions(const std::string& root);

// Every partition of a complete version (preferring a set of
// `preferred_num_ps` partitions when there are several). NotFound when the
// version is not complete; corrupt files name the file and tensor.
Result<std::vector<Checkpoint>> ReadPartitions(const std::string& root, int64_t version,
                                               int preferred_num_ps = 0);

// After a PS wrote `written`, when keep_max > 0: keeps the keep_max newest
// complete versions and deletes every other version directory older than
// the newest complete one, complete or partial (a partial one there can no
// longer complete: every PS has written a newer version), never `written`.
// Versions newer than the newest complete one are being written and stay.
// Any PS may prune. keep_max <= 0 keeps everything.
Status PrunePartitions(const std::string& root, int keep_max, int64_t written);

}  // namespace edl::roles::ps
