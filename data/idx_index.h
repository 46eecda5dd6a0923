// IndexIdxRecords: the indexer of RecordFormat::kIdx (called by
// BuildRecordIndex, data/record_index.h). An IDX file's records are fixed
// size, so a plain file needs no index; a gzip one is streamed once, with
// bounded memory, for the access points a reader starts at (the offsets come
// along, by the same planner as other formats).
#pragma once

#include <cstdint>
#include <functional>

#include "base/status.h"
#include "data/byte_stream.h"
#include "data/index_planner.h"
#include "data/record_index.h"

namespace edl::data {

// Reads the header and every record of `stream` from its start, reporting
// each record to `plan`; sets index->num_records and data_size. Errors name
// the file: a header ParseIdxHeader refuses, data that is not exactly the
// header's records (CheckIdxDataSize), a truncated or corrupt gzip stream.
Status IndexIdxRecords(ByteStream& stream, RecordIndex* index, IndexPlanner& plan,
                       const std::function<void(uint64_t)>& progress);

}  // namespace edl::data
