#include "data/index_planner.h"

#include <algorithm>
#include <bit>

namespace edl::data {

IndexPlanner::IndexPlanner(RecordIndex* index, ByteStream& stream, const IndexOptions& options)
    : index_(index), stream_(stream.gzip() ? &stream : nullptr), spacing_(options.access_spacing) {
  if (stream_)
    stream_->RecordAccessPoints(
        4 * spacing_, [this](GzipAccessPoint p) { index_->access.push_back(std::move(p)); });
}

void IndexPlanner::OnRecord(uint64_t r, uint64_t at) {
  if (r == 0) first_at_ = at;
  if (stride_ == 0 && r > 0 && at - first_at_ >= spacing_) {
    const uint64_t n = std::bit_ceil(r);
    index_->every = std::min<uint64_t>(index_->every, n);
    stride_ = (n + index_->every - 1) / index_->every * index_->every;
  }
  if (r % index_->every == 0) index_->offsets.push_back(at);
  if (stream_ && stride_ > 0 && r % stride_ == 0 && at - last_at_ >= spacing_ / 2 &&
      stream_->AccessPointBefore(at)) {
    last_at_ = at;
  }
}

void IndexPlanner::Finish() {
  auto& a = index_->access;
  std::sort(a.begin(), a.end(), [](const GzipAccessPoint& x, const GzipAccessPoint& y) {
    return x.out_offset < y.out_offset;
  });
  a.erase(std::unique(a.begin(), a.end(),
                      [](const GzipAccessPoint& x, const GzipAccessPoint& y) {
                        return x.out_offset == y.out_offset;
                      }),
          a.end());
}

}  // namespace edl::data
