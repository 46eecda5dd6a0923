#include "data/column_source.h"

namespace edl::data {

Result<Examples> ColumnSource::Read(int64_t begin, int64_t end) const {
  if (begin < 0 || begin > end || end > num_records()) return Source::Read(begin, end);
  return records_.Slice(layout_, begin, end);
}

Result<Examples> ColumnSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  return records_.Gather(layout_, indices.data(), static_cast<int64_t>(indices.size()));
}

}  // namespace edl::data
