#include "data/idx_index.h"

#include <algorithm>
#include <limits>

#include "data/buffered_input.h"
#include "data/idx_header.h"

namespace edl::data {

Status IndexIdxRecords(ByteStream& stream, RecordIndex* index, IndexPlanner& plan,
                       const std::function<void(uint64_t)>& progress) {
  BufferedInput in(stream);
  EDL_ASSIGN_OR_RETURN(bool whole_header, in.Need(kMaxIdxHeader));
  (void)whole_header;  // a short file: ParseIdxHeader says what is missing
  const std::string prefix(in.data(), std::min(in.available(), kMaxIdxHeader));
  EDL_ASSIGN_OR_RETURN(IdxHeader header, ParseIdxHeader(in.path(), prefix));
  in.Advance(header.bytes);
  const uint64_t size = static_cast<uint64_t>(header.RecordBytes());
  const uint64_t records = static_cast<uint64_t>(header.NumRecords());
  uint64_t next_report = 64ull << 20;
  for (uint64_t r = 0; r < records; ++r) {
    EDL_ASSIGN_OR_RETURN(bool more, in.Need(1));  // the record's first byte has been read
    if (!more) break;
    plan.OnRecord(r, in.offset());
    EDL_ASSIGN_OR_RETURN(bool whole, in.Skip(size));
    if (!whole) break;
    if (progress && in.offset() >= next_report) {
      progress(in.offset());
      next_report = in.offset() + (64ull << 20);
    }
  }
  // Whatever is left (the data ends at its size, or holds bytes too many).
  EDL_ASSIGN_OR_RETURN(bool ended, in.Skip(std::numeric_limits<uint64_t>::max()));
  (void)ended;
  EDL_RETURN_IF_ERROR(CheckIdxDataSize(in.path(), header, in.offset()));
  index->num_records = records;
  index->data_size = in.offset();
  return Status::Ok();
}

}  // namespace edl::data
