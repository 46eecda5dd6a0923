// TrainingState: a worker's whole training state (weights, optimizer slots,
// step count, epoch) as one byte string, for Elastic AllReduce
// (docs/allreduce.md, 'Membership and failures'): a re-formed ring
// broadcasts it from one member so every member, new ones included,
// continues from bitwise identical state with no checkpoint on disk. Every
// member runs the same model spec, so names and shapes must match; decoding
// checks them and changes nothing when anything is off.
//
// Format (little-endian): "EDLS" u32 format, i64 step, i64 epoch, u32 count,
// then per tensor: u8 group (0 weight, 1 optimizer slot), u32 name length,
// name, u32 rank, i64 dims[rank], float32 data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "roles/local/compiled_model.h"

namespace edl::roles::worker {

std::string EncodeTrainingState(const CompiledModel& cm);

// Restores weights, optimizer slots, step count (optimizer iterations) and
// epoch from `bytes`. InvalidArgument naming what is wrong (truncated,
// bad magic, unknown weight, shape mismatch) leaves `cm` unchanged.
Status DecodeTrainingState(std::string_view bytes, CompiledModel& cm);

}  // namespace edl::roles::worker
